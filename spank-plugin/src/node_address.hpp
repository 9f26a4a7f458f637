#pragma once
#include <optional>
#include <string>

#include "wireup/master_addr.hpp"

namespace wireup::spank {

// IPv4 literal of a Slurm node and where it came from: its name when it
// encodes one (ip-10-1-2-3), the resolver (AF_INET only), then the NodeAddr of
// the slurm.conf this node's Slurm loaded (`task_slurm_conf`: the task's
// SLURM_CONF; then this process's; then the configless cache and the usual
// places). No RPC to slurmctld. ipv4 "" when no source knows it.
NodeAddress node_ipv4(const std::string& node, const std::optional<std::string>& task_slurm_conf);

}  // namespace wireup::spank
