#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

// The job prolog's half of the memory snapshots (wireup-train --memory_checkpoint_freq):
// before any task of the job starts, it makes PARENT/wireup-JOBID for the job's user,
// 0700, with the owner marker wireup-train writes, so that nobody else can take that
// predictable name first. Whatever holds the name and is not exactly that (another
// user's directory, a symlink, a file, a directory with another mode or marker) is
// moved aside, unfollowed and unchanged, into a root-owned 0700 work directory with a
// name nobody can predict, which the job's epilog removes (snapshot_sweep.hpp). No
// Slurm headers: the plugin calls it, the tests call it on their own trees.
namespace wireup::spank {

struct PrologResult {
  bool created = false;            // PARENT/wireup-JOBID made for the job's user
  bool kept = false;               // it was there already, exactly as it should be
  std::vector<std::string> moved;  // "moved aside what held the name (WHY) to PATH", escaped
  std::string error;               // "" or why the directory is not there (escaped)
};

// Makes PARENT/wireup-JOB for `uid`:`gid` as above, in a PARENT that is root's or
// sticky and opened without following a symlink; nothing when PARENT does not exist.
PrologResult prepare_job_snapshot_dir(const std::string& parent, const std::string& job, uid_t uid,
                                      gid_t gid);

// One line for the log: "" when PARENT does not exist or the directory was simply made.
std::string describe(const PrologResult& r, const std::string& parent, const std::string& job);

}  // namespace wireup::spank
