#include "job_epilog.hpp"

#include <string>

#include "snapshot_prolog.hpp"
#include "snapshot_sweep.hpp"
#include "spank_calls.hpp"

namespace wireup::spank {

void prepare_memory_snapshots(spank_t sp, const AdminConfig& admin) {
  if (admin.memory_snapshot_dirs.empty()) return;
  const auto job = get_u32(sp, S_JOB_ID, "S_JOB_ID");
  const auto uid = get_u32(sp, S_JOB_UID, "S_JOB_UID");
  const auto gid = get_u32(sp, S_JOB_GID, "S_JOB_GID");
  if (!job || !uid || !gid) return;
  const std::string job_id = std::to_string(*job);
  for (const std::string& parent : admin.memory_snapshot_dirs) {
    const PrologResult r = prepare_job_snapshot_dir(parent, job_id, static_cast<uid_t>(*uid),
                                                    static_cast<gid_t>(*gid));
    const std::string line = describe(r, parent, job_id);
    if (line.empty()) continue;
    if (r.error.empty())
      slurm_info("spank_wireup: %s", line.c_str());
    else
      slurm_error("spank_wireup: %s", line.c_str());
  }
}

void sweep_memory_snapshots(spank_t sp, const AdminConfig& admin) {
  if (admin.memory_snapshot_dirs.empty()) return;
  const auto job = get_u32(sp, S_JOB_ID, "S_JOB_ID");
  const auto uid = get_u32(sp, S_JOB_UID, "S_JOB_UID");
  if (!job || !uid) return;
  const std::string job_id = std::to_string(*job);
  SweepOptions options;
  options.limits = admin.memory_snapshot_limits;
  for (const std::string& parent : admin.memory_snapshot_dirs) {
    for (const bool moved : {false, true}) {
      const SweepResult r =
          moved ? sweep_moved_aside(parent, job_id, static_cast<uid_t>(*uid), options)
                : sweep_job_snapshots(parent, job_id, static_cast<uid_t>(*uid), options);
      const std::string line =
          moved ? describe_moved_aside(r, parent, job_id) : describe(r, parent, job_id);
      if (line.empty()) continue;
      // Only the marker: the prolog's directory, unused. Every job has one: debug level.
      const bool unused = !moved && r.removed && r.files == 1 && r.dirs_entered == 1;
      if (unused)
        slurm_debug("spank_wireup: %s", line.c_str());
      else if (r.left.empty() && r.stopped.empty())
        slurm_info("spank_wireup: %s", line.c_str());
      else
        slurm_error("spank_wireup: %s", line.c_str());
    }
  }
}

}  // namespace wireup::spank
