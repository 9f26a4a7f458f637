#include "wireup/task_env.hpp"

#include "wireup/efa_policy.hpp"
#include "wireup/error.hpp"

namespace wireup {

TaskPlan plan_task(const TaskFacts& t, const AdminConfig& admin, const UserOptions& user,
                   const HostFacts& host, const EnvLookup& current, const TaskContext& ctx) {
  check_layout(t.layout);
  if (!is_ipv4_literal(t.master_addr))
    throw InputError("MASTER_ADDR: the step's first node has no IPv4 address (got " +
                     (t.master_addr.empty() ? std::string("nothing") : t.master_addr) + ")");

  const auto& l = t.layout;
  const auto port = derive_port(admin.ports, t.job_id, t.step_id);
  const std::string step = "step " + std::to_string(t.job_id) + "." + std::to_string(t.step_id);
  std::vector<EnvEntry> want = {
      {"RANK", std::to_string(l.rank), "global task id"},
      {"LOCAL_RANK", std::to_string(l.local_rank), "task id on this node"},
      {"WORLD_SIZE", std::to_string(l.world_size), "tasks in the step"},
      {"LOCAL_WORLD_SIZE", std::to_string(l.local_world_size), "tasks on this node"},
      {"GROUP_RANK", std::to_string(l.node_rank), "node index in the step"},
      {"NODE_RANK", std::to_string(l.node_rank), "node index in the step"},
      {"GROUP_WORLD_SIZE", std::to_string(l.num_nodes), "nodes in the step"},
      {"MASTER_ADDR", t.master_addr,
       "first node of the step" +
           (t.master_addr_source.empty() ? "" : ", from " + t.master_addr_source)},
      {"MASTER_PORT", std::to_string(port), "derived from " + step},
      {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", "fail fast on NCCL errors"},
  };
  for (auto& e : want) e.rendezvous = e.name != "TORCH_NCCL_ASYNC_ERROR_HANDLING";
  TaskPlan plan;
  if (!ctx.order_warning.empty()) plan.notes.push_back(ctx.order_warning);
  if (admin.omp_threads && l.local_world_size > 1) {
    const auto n = t.cpus_per_task.value_or(1);
    want.push_back({"OMP_NUM_THREADS", std::to_string(n == 0 ? 1 : n),
                    std::to_string(l.local_world_size) + " tasks share the node"});
  }

  const EfaPlan efa = plan_efa(user.efa.value_or(admin.efa), host);
  want.insert(want.end(), efa.entries.begin(), efa.entries.end());
  plan.notes.insert(plan.notes.end(), efa.notes.begin(), efa.notes.end());
  if (!ctx.root_read.empty()) plan.notes.push_back("install trees read from " + ctx.root_read);

  if (!admin.nccl_socket_ifname.empty())
    want.push_back({"NCCL_SOCKET_IFNAME", admin.nccl_socket_ifname, "plugstack.conf", Mode::IfUnset,
                    kByAdmin});
  if (!admin.nccl_debug.empty())
    want.push_back({"NCCL_DEBUG", admin.nccl_debug, "plugstack.conf", Mode::IfUnset, kByAdmin});
  if (user.nccl_debug) {
    if (user.nccl_debug->empty())
      std::erase_if(want, [](const EnvEntry& e) { return e.name == "NCCL_DEBUG"; });
    else
      want.push_back({"NCCL_DEBUG", *user.nccl_debug, "--wireup-nccl-debug", Mode::Force, kByUser});
  }
  for (EnvEntry e : admin.extra) {
    e.source = kByAdmin;
    want.push_back(std::move(e));
  }

  plan.decisions =
      ctx.submitted ? resolve_env(want, current, ctx.submitted) : resolve_env(want, current);
  return plan;
}

std::string describe(const TaskPlan& plan) {
  std::string out;
  for (const auto& d : plan.decisions)
    out += d.name + "=" + d.value + "  (" + action_name(d.action) + ": " + d.reason + ")" +
           (d.source.empty() ? "" : " [" + d.source + "]") + "\n";
  for (const auto& n : plan.notes) out += "# " + n + "\n";
  return out;
}

}  // namespace wireup
