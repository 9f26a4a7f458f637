#pragma once
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "wireup/sweep_budget.hpp"

// The job epilog's removal of a finished job's memory snapshots (wireup-train
// --memory_checkpoint_freq): PARENT/wireup-JOBID on this node. It runs as root in
// a directory the job's user owns, so it never follows a symlink (PARENT is opened
// one component at a time with O_NOFOLLOW, every later step is openat/unlinkat
// relative to a directory it opened with O_NOFOLLOW), removes only what the job's
// user owns on PARENT's file system, only under a directory whose owner marker names
// this job and user, and within a budget (SweepLimits). No Slurm headers: the plugin
// calls it, the tests call it on their own trees.
namespace wireup::spank {

struct SweepOptions {
  SweepLimits limits;
  // Tests: called with (st_dev, st_ino) of each directory the walk enters.
  std::function<void(std::uint64_t, std::uint64_t)> on_enter;
};

struct SweepResult {
  bool found = false;         // PARENT/wireup-JOBID existed (or PARENT was refused)
  bool removed = false;       // and is gone now
  std::uint64_t files = 0;    // files removed
  std::uint64_t bytes = 0;    // their sizes
  std::uint64_t entries = 0;  // names read (the budget's count)
  std::uint64_t dirs_entered = 0;
  std::uint64_t revisits = 0;  // directories met again after a move, not entered again
  std::string stopped;         // "" or why the budget stopped the sweep
  LeftLog left;                // what stayed: a count and the first few, escaped
};

// Removes PARENT/wireup-JOB if it is a directory (not a symlink) owned by `uid`
// whose owner marker (a small regular file of `uid` with one link) names `job` and
// `uid`, in a PARENT that is root's or sticky; anything inside that `uid` does not
// own, on another file system, deeper than a snapshot tree goes, or past the budget
// stays and is counted in `left`.
SweepResult sweep_job_snapshots(const std::string& parent, const std::string& job, uid_t uid,
                                const SweepOptions& options = {});

// One line for the log, every user-controlled name in it escaped: "" when nothing
// was there.
std::string describe(const SweepResult& r, const std::string& parent, const std::string& job);

// What the job prolog (snapshot_prolog.hpp) moved aside for `job` in PARENT: each of
// its work directories PARENT/.wireup-prolog-JOB-* (root's, 0700) and what they hold,
// each entry removed as its owner's tree would be (only what that owner owns, on the
// same file system, no deeper than a snapshot tree, never following a symlink), within
// the budget; nothing of root's unless root is the job's user `uid`. `found` when
// there was any.
SweepResult sweep_moved_aside(const std::string& parent, const std::string& job, uid_t uid,
                              const SweepOptions& options = {});

// Its line for the log, names escaped: "" when there was nothing.
std::string describe_moved_aside(const SweepResult& r, const std::string& parent,
                                 const std::string& job);

}  // namespace wireup::spank
