#include "remote_task.hpp"

extern "C" {
#include <slurm/slurm.h>
}

#include <unistd.h>

#include <cstdio>
#include <exception>

#include "host_probe.hpp"
#include "libfabric_probe.hpp"
#include "plugin_state.hpp"
#include "spank_calls.hpp"
#include "task_root.hpp"
#include "wireup/error.hpp"
#include "wireup/master_addr.hpp"
#include "wireup/nodelist.hpp"
#include "wireup/task_env.hpp"
#include "wireup/text.hpp"

namespace wireup::spank {
namespace {

bool active() {
  const PluginState& s = state();
  return s.admin && s.user_error.empty() && wireup_enabled(*s.admin, s.user);
}

// Batch scripts, extern and interactive steps are not ranks of anything; their
// environment would also leak into the job's own srun steps.
bool normal_step(spank_t sp) {
  const auto step = get_u32(sp, S_JOB_STEPID, "S_JOB_STEPID");
  return step && *step <= SLURM_MAX_NORMAL_STEP_ID;
}

NodeAddress first_node_ipv4(spank_t sp, std::string& node) {
  const auto list = get_env(sp, "SLURM_STEP_NODELIST");
  if (!list) return {"", "", {"SLURM_STEP_NODELIST: not set"}};
  node = first_node(*list);
  return system_node_ipv4(node, get_env(sp, "SLURM_CONF"));
}

HostFacts probe(const AdminConfig& admin) {
  HostFacts h = probe_host(admin.sysroot, admin.ofi_nccl_prefix);
  if (!h.efa_devices.empty())
    h.libfabric_efa = libfabric_has_efa(admin.sysroot, &h.libfabric_version);
  return h;
}

// A bad option value that reached slurmstepd (see options.cpp): rank 0 says
// so on its stderr, once per step, so the user sees why nothing was set.
void report_user_error(spank_t sp) {
  const auto rank = get_u32(sp, S_TASK_GLOBAL_ID, "S_TASK_GLOBAL_ID");
  if (!rank || *rank != 0) return;
  const std::string msg =
      "wireup: " + state().user_error + "; this step runs without wireup's variables\n";
  std::fputs(msg.c_str(), stderr);
  std::fflush(stderr);
}

// Which root the task's install trees are read from, and whose values are
// whose (docs/containers.md). A task that a container plugin moved into
// another mount namespace before this task_init reads them from its own root.
TaskContext task_context(const PluginState& s, HostFacts& host) {
  TaskContext ctx;
  const AdminConfig& a = *s.admin;
  const std::string opt = a.sysroot == "/" ? "/opt" : a.sysroot + "/opt";
  if (s.step_mnt_ns != 0 && mount_namespace_id() != s.step_mnt_ns) {
    host = with_install_trees(host, a.sysroot, a.ofi_nccl_prefix);
    ctx.root_read = "the task's root (" + opt +
                    " inside the container: a container plugin moved this task into its mount "
                    "namespace before wireup's task_init)";
  } else {
    ctx.root_read = "the node's root (" + opt + ", as slurmstepd sees it)";
  }
  if (s.submitted) {
    const auto* env = &*s.submitted;
    ctx.submitted = [env](const std::string& n) -> std::optional<std::string> {
      const auto it = env->find(n);
      return it == env->end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  }
  ctx.order_warning = s.order_warning;
  return ctx;
}

}  // namespace

void prepare_step(spank_t sp) {
  PluginState& s = state();
  if (!active() || !normal_step(sp)) return;
  s.step_mnt_ns = mount_namespace_id();
  s.submitted = get_job_env(sp);
  if (s.user.verbose) s.order_warning = container_order_warning(get_env(sp, "SLURM_CONF"));
  s.host = probe(*s.admin);
  std::string node;
  try {
    const NodeAddress a = first_node_ipv4(sp, node);
    s.master_addr = a.ipv4;
    s.master_addr_source = a.source;
  } catch (const std::exception&) {
    s.master_addr.clear();  // task_init retries and reports
  }
}

int wire_task(spank_t sp) {
  PluginState& s = state();
  if (!s.user_error.empty()) report_user_error(sp);
  if (!active() || !normal_step(sp)) return 0;

  TaskFacts t;
  const auto job = get_u32(sp, S_JOB_ID, "S_JOB_ID");
  const auto step = get_u32(sp, S_JOB_STEPID, "S_JOB_STEPID");
  const auto rank = get_u32(sp, S_TASK_GLOBAL_ID, "S_TASK_GLOBAL_ID");
  const auto local = get_int(sp, S_TASK_ID, "S_TASK_ID");
  const auto world = get_u32(sp, S_JOB_TOTAL_TASK_COUNT, "S_JOB_TOTAL_TASK_COUNT");
  const auto local_world = get_u32(sp, S_JOB_LOCAL_TASK_COUNT, "S_JOB_LOCAL_TASK_COUNT");
  const auto node = get_u32(sp, S_JOB_NODEID, "S_JOB_NODEID");
  const auto nodes = get_u32(sp, S_JOB_NNODES, "S_JOB_NNODES");
  if (!job || !step || !rank || !local || *local < 0 || !world || !local_world || !node || !nodes) {
    slurm_error("spank_wireup: Slurm did not provide the task's ids; nothing injected");
    return 0;
  }
  t.job_id = *job;
  t.step_id = *step;
  t.layout = {*rank, static_cast<std::uint32_t>(*local), *world, *local_world, *node, *nodes};
  if (const auto cpt = get_env(sp, "SLURM_CPUS_PER_TASK"))
    if (const auto n = parse_uint(*cpt, 4096)) t.cpus_per_task = static_cast<std::uint32_t>(*n);

  try {
    NodeAddress found{s.master_addr, s.master_addr_source, {}};
    std::string first = "?";
    if (found.ipv4.empty()) found = first_node_ipv4(sp, first);
    const MasterAddr m = resolve_master_addr(first, found, get_env(sp, "MASTER_ADDR"),
                                             "export MASTER_ADDR=IPV4 before srun");
    t.master_addr = m.ipv4;
    t.master_addr_source = m.source;
    HostFacts host = s.host ? *s.host : probe(*s.admin);
    const TaskContext ctx = task_context(s, host);
    const TaskPlan plan = plan_task(
        t, *s.admin, s.user, host, [sp](const std::string& n) { return get_env(sp, n.c_str()); },
        ctx);
    for (const auto& d : plan.decisions)
      if (d.action == Action::Set) set_env(sp, d.name, d.value);
    if (s.user.verbose) {
      // One write per task, each line tagged, so interleaved tasks stay readable.
      std::string text;
      const std::string tag = "wireup[" + std::to_string(t.layout.rank) + "]: ";
      for (const auto& line : split(describe(plan), '\n'))
        if (!line.empty()) text += tag + line + "\n";
      std::fputs(text.c_str(), stderr);
    }
    return 0;
  } catch (const InputError& e) {
    // This is the task's own process, just before exec. An `optional` plugin's
    // -1 is ignored by Slurm, so stop the task here: running it unwired (say,
    // without the EFA it was told to require) would fail later, obscurely.
    slurm_error("spank_wireup: rank %u: %s", t.layout.rank, e.what());
    std::fprintf(stderr, "wireup: rank %u: %s\n", t.layout.rank, e.what());
    std::fflush(stderr);
    _exit(1);
  }
}

}  // namespace wireup::spank
