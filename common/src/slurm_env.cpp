#include "wireup/slurm_env.hpp"

#include "wireup/error.hpp"
#include "wireup/nodelist.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

std::string need(const EnvLookup& env, const char* name) {
  auto v = env(name);
  if (!v) throw InputError(std::string(name) + " is not set (run inside an srun step)");
  return *v;
}

std::uint64_t need_uint(const EnvLookup& env, const char* name, std::uint64_t max) {
  const auto s = need(env, name);
  const auto v = parse_uint(s, max);
  if (!v) throw InputError(std::string(name) + "=" + quoted(s) + " is not a number");
  return *v;
}

}  // namespace

SlurmTask task_from_slurm_env(const EnvLookup& env) {
  SlurmTask t;
  auto& f = t.facts;
  f.job_id = need_uint(env, "SLURM_JOB_ID", UINT32_MAX);
  f.step_id = need_uint(env, "SLURM_STEP_ID", UINT32_MAX);
  auto& l = f.layout;
  l.rank = static_cast<std::uint32_t>(need_uint(env, "SLURM_PROCID", UINT32_MAX));
  l.local_rank = static_cast<std::uint32_t>(need_uint(env, "SLURM_LOCALID", UINT32_MAX));
  l.world_size = static_cast<std::uint32_t>(need_uint(env, "SLURM_STEP_NUM_TASKS", UINT32_MAX));
  l.node_rank = static_cast<std::uint32_t>(need_uint(env, "SLURM_NODEID", UINT32_MAX));
  l.num_nodes = static_cast<std::uint32_t>(need_uint(env, "SLURM_STEP_NUM_NODES", UINT32_MAX));
  const auto per_node = expand_tasks_per_node(need(env, "SLURM_STEP_TASKS_PER_NODE"));
  if (l.node_rank >= per_node.size())
    throw InputError("SLURM_STEP_TASKS_PER_NODE lists " + std::to_string(per_node.size()) +
                     " nodes, but SLURM_NODEID is " + std::to_string(l.node_rank));
  l.local_world_size = per_node[l.node_rank];
  if (auto cpt = env("SLURM_CPUS_PER_TASK"))
    if (auto n = parse_uint(*cpt, 4096)) f.cpus_per_task = static_cast<std::uint32_t>(*n);
  t.first_node = first_node(need(env, "SLURM_STEP_NODELIST"));
  check_layout(l);
  return t;
}

}  // namespace wireup
