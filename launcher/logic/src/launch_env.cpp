#include "wireup/launch_env.hpp"

#include <algorithm>
#include <utility>

#include "wireup/env_plan.hpp"
#include "wireup/error.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/stop_reason.hpp"

namespace wireup {

bool inherited_identity_var(std::string_view name) {
  for (std::string_view p : {"PMIX_", "PMI_", "OMPI_", "PRTE_", "OPAL_"})
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

std::vector<std::string> build_worker_env(const WorkerSpec& w,
                                          const std::vector<std::string>& base) {
  check_layout(
      {w.rank, w.local_rank, w.world_size, w.local_world_size, w.group_rank, w.group_world_size});
  if (w.master_addr.empty()) throw InputError("worker environment: MASTER_ADDR is empty");
  if (w.master_port == 0 || w.master_port > 65535)
    throw InputError("worker environment: MASTER_PORT " + std::to_string(w.master_port) +
                     " is not a port");
  for (const auto* v : {&w.role, &w.run_id, &w.error_file, &w.stop_reason, &w.master_addr})
    if (!valid_env_value(*v)) throw InputError("worker environment: value with a newline or NUL");

  const auto u = [](std::uint32_t n) { return std::to_string(n); };
  std::vector<std::pair<std::string, std::string>> forced = {
      {"RANK", u(w.rank)},
      {"GROUP_RANK", u(w.group_rank)},
      {"ROLE_RANK", u(w.rank)},
      {"ROLE_NAME", w.role},
      {"LOCAL_RANK", u(w.local_rank)},
      {"LOCAL_WORLD_SIZE", u(w.local_world_size)},
      {"WORLD_SIZE", u(w.world_size)},
      {"GROUP_WORLD_SIZE", u(w.group_world_size)},
      {"ROLE_WORLD_SIZE", u(w.world_size)},
      {"MASTER_ADDR", w.master_addr},
      {"MASTER_PORT", u(w.master_port)},
      {"TORCHELASTIC_RESTART_COUNT", u(w.restart_count)},
      {"TORCHELASTIC_MAX_RESTARTS", u(w.max_restarts)},
      {"TORCHELASTIC_RUN_ID", w.run_id},
      // torch's env:// rendezvous: True = every rank connects to the agent's store,
      // False = rank 0's init_process_group hosts it.
      {"TORCHELASTIC_USE_AGENT_STORE", w.agent_store ? "True" : "False"},
  };
  if (!w.error_file.empty()) forced.emplace_back("TORCHELASTIC_ERROR_FILE", w.error_file);
  if (!w.stop_reason.empty()) forced.emplace_back(kStopReasonVar, w.stop_reason);
  std::vector<std::pair<std::string, std::string>> if_unset = {
      {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"}};
  if (w.local_world_size > 1) if_unset.emplace_back("OMP_NUM_THREADS", "1");

  auto forced_name = [&](std::string_view n) {
    return n == "TORCHELASTIC_ERROR_FILE" || n == kStopReasonVar ||
           std::any_of(forced.begin(), forced.end(), [&](auto& f) { return f.first == n; });
  };
  std::vector<std::string> env;
  env.reserve(base.size() + forced.size() + 2);
  for (const auto& kv : base) {
    const std::string_view name = std::string_view(kv).substr(0, kv.find('='));
    if ((!w.keep_task_identity && inherited_identity_var(name)) || forced_name(name)) continue;
    std::erase_if(if_unset, [&](auto& d) { return d.first == name; });
    env.push_back(kv);
  }
  for (const auto& [k, v] : forced) env.push_back(k + "=" + v);
  for (const auto& [k, v] : if_unset) env.push_back(k + "=" + v);
  return env;
}

}  // namespace wireup
