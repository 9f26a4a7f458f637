#include "node_address.hpp"

#include <cstdlib>

namespace wireup::spank {

NodeAddress node_ipv4(const std::string& node, const std::optional<std::string>& task_slurm_conf) {
  const char* own = std::getenv("SLURM_CONF");
  const auto paths =
      slurm_conf_candidates(task_slurm_conf, own ? std::optional<std::string>(own) : std::nullopt);
  return find_node_ipv4(node, system_address_sources(paths));
}

}  // namespace wireup::spank
