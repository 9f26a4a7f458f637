#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wireup/slurm_conf_nodes.hpp"

namespace wireup {

// Where the IPv4 address of a node (the step's first, for MASTER_ADDR) may come
// from, in the order they are asked. Functions are injected so the order is
// testable; system_address_sources() gives the real ones.
struct AddressSources {
  // AF_INET lookup of a name (hosts file, DNS, ...): nullopt when it fails.
  std::function<std::optional<std::string>(const std::string& name)> resolve;
  ConfReader read_file;
  // slurm.conf files the node's Slurm may have loaded, most specific first.
  std::vector<std::string> slurm_conf_paths;
};

struct NodeAddress {
  std::string ipv4;    // "" when no source knew the address
  std::string source;  // e.g. "resolver", "slurm.conf NodeAddr (/run/slurm/conf/slurm.conf:12)"
  std::vector<std::string> tried;  // each source asked, with what it answered
};

// 1. the name itself (ip-A-B-C-D, or a literal); 2. the resolver; 3. the
// first slurm.conf candidate that declares the node: its NodeAddr (else its
// NodeHostname), itself taken literally or resolved. A slurm.conf that cannot
// be read or is malformed is noted in `tried` and the next one is asked.
NodeAddress find_node_ipv4(const std::string& node, const AddressSources& sources);

// "MASTER_ADDR: cannot find an IPv4 address for node 'x' (CONTEXT). Tried: ...
// Make the name resolvable, declare NodeAddr in slurm.conf, or REMEDY"
std::string no_address_message(const std::string& node, const std::string& context,
                               const NodeAddress& result, const std::string& remedy);

// The step's MASTER_ADDR, decided one way for the plugin, wireup-env and
// wireup-launch. `found` is find_node_ipv4 of `first_node` (the first node of
// SLURM_STEP_NODELIST). When no source knew it, `own` (the task's own
// MASTER_ADDR; nullopt where the caller has no such fallback) stands in if it is
// an IPv4 literal; otherwise InputError(no_address_message(..., remedy)).
struct MasterAddr {
  std::string ipv4;
  std::string source;  // found.source, or "the task's own MASTER_ADDR"
};
MasterAddr resolve_master_addr(const std::string& first_node, const NodeAddress& found,
                               const std::optional<std::string>& own, const std::string& remedy);

// slurm.conf candidates: SLURM_CONF of the task, then of this process, the
// configless cache (/run/slurm/conf, SlurmdSpoolDir's conf-cache), the usual
// install places. Empty and repeated entries dropped.
std::vector<std::string> slurm_conf_candidates(const std::optional<std::string>& task_slurm_conf,
                                               const std::optional<std::string>& own_slurm_conf);

// getaddrinfo(AF_INET) and a bounded file read (16 MiB), over `conf_paths`.
AddressSources system_address_sources(std::vector<std::string> conf_paths);

// find_node_ipv4 with the real sources over slurm_conf_candidates(the task's
// SLURM_CONF, this process's SLURM_CONF): what every wiring path asks.
NodeAddress system_node_ipv4(const std::string& node,
                             const std::optional<std::string>& task_slurm_conf);

}  // namespace wireup
