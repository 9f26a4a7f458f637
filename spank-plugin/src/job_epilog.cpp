#include "job_epilog.hpp"

#include <string>

#include "snapshot_sweep.hpp"
#include "spank_calls.hpp"

namespace wireup::spank {

void sweep_memory_snapshots(spank_t sp, const AdminConfig& admin) {
  if (admin.memory_snapshot_dirs.empty()) return;
  const auto job = get_u32(sp, S_JOB_ID, "S_JOB_ID");
  const auto uid = get_u32(sp, S_JOB_UID, "S_JOB_UID");
  if (!job || !uid) return;
  const std::string job_id = std::to_string(*job);
  SweepOptions options;
  options.limits = admin.memory_snapshot_limits;
  for (const std::string& parent : admin.memory_snapshot_dirs) {
    const SweepResult r = sweep_job_snapshots(parent, job_id, static_cast<uid_t>(*uid), options);
    const std::string line = describe(r, parent, job_id);
    if (line.empty()) continue;
    if (r.left.empty() && r.stopped.empty())
      slurm_info("spank_wireup: %s", line.c_str());
    else
      slurm_error("spank_wireup: %s", line.c_str());
  }
}

}  // namespace wireup::spank
