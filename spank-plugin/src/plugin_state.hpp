#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "wireup/host_facts.hpp"
#include "wireup/settings.hpp"

namespace wireup::spank {

// One copy per process that loads the plugin (srun, sbatch, slurmd,
// slurmstepd). slurmstepd forks tasks after user_init, so what user_init
// caches here is seen by every task_init of the step.
struct PluginState {
  std::optional<AdminConfig> admin;  // empty: plugstack.conf arguments were bad
  std::string admin_error;
  UserOptions user;
  std::string user_error;          // a bad option value seen in slurmstepd
  std::optional<HostFacts> host;   // probed once per step
  std::string master_addr;         // resolved once per step when possible
  std::string master_addr_source;  // where master_addr came from (verbose output)
  std::uint64_t step_mnt_ns = 0;   // slurmstepd's mount namespace (task_root.hpp)
  // The job's environment in user_init: what the user submitted, before any
  // container plugin's task_init imported an image's environment.
  std::optional<std::map<std::string, std::string>> submitted;
  std::string order_warning;  // plugstack.conf loads a container plugin after wireup
};

PluginState& state();

}  // namespace wireup::spank
