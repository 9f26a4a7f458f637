#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

// The job epilog's removal of a finished job's memory snapshots (wireup-train
// --memory_checkpoint_freq): PARENT/wireup-JOBID on this node. It runs as root in
// a directory the job's user owns, so it never follows a symlink (every step is
// openat/unlinkat relative to a directory it opened with O_NOFOLLOW), removes
// only what the job's user owns, and only under a directory whose owner marker
// names this job and user. No Slurm headers: the plugin calls it, the unit tests
// call it on their own trees.
namespace wireup::spank {

struct SweepResult {
  bool found = false;            // PARENT/wireup-JOBID existed
  bool removed = false;          // and is gone now
  std::uint64_t files = 0;       // files removed
  std::uint64_t bytes = 0;       // their sizes
  std::vector<std::string> left;  // what stayed, each "PATH: why"
};

// Removes PARENT/wireup-JOB if it is a directory (not a symlink) owned by `uid`
// whose owner marker names `job` and `uid`; anything inside that `uid` does not own,
// or that lies deeper than a snapshot tree goes, stays and is named in `left`.
SweepResult sweep_job_snapshots(const std::string& parent, const std::string& job, uid_t uid);

// One line for the log: "" when nothing was there.
std::string describe(const SweepResult& r, const std::string& parent, const std::string& job);

}  // namespace wireup::spank
