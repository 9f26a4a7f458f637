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

// slurm.conf candidates: SLURM_CONF of the task, then of this process, the
// configless cache (/run/slurm/conf, SlurmdSpoolDir's conf-cache), the usual
// install places. Empty and repeated entries dropped.
std::vector<std::string> slurm_conf_candidates(const std::optional<std::string>& task_slurm_conf,
                                               const std::optional<std::string>& own_slurm_conf);

// getaddrinfo(AF_INET) and a bounded file read (16 MiB), over `conf_paths`.
AddressSources system_address_sources(std::vector<std::string> conf_paths);

}  // namespace wireup
