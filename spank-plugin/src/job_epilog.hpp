#pragma once
#include "spank_api.hpp"
#include "wireup/settings.hpp"

namespace wireup::spank {

// slurmd's job prolog, as root, on each node of a job before any of its tasks starts:
// makes DIR/wireup-JOBID in each of the admin's memory_snapshot_dirs for the job's
// user (0700, with wireup-train's owner marker), moving aside whatever else holds that
// name (docs/snapshot-epilog.md), and logs what it moved, every user-controlled name
// escaped. Never fails: a failing prolog would drain the node; the trainer then
// refuses a directory that is not its own, naming why.
void prepare_memory_snapshots(spank_t sp, const AdminConfig& admin);

// slurmd's job epilog, as root, on each node of a job that ended (however it ended):
// removes the job's memory snapshots from the admin's memory_snapshot_dirs within the
// admin's budget (memory_snapshot_max_*), and what the prolog moved aside, and logs
// what it removed or left, every user-controlled name escaped. Never fails: a failing
// epilog would drain the node.
void sweep_memory_snapshots(spank_t sp, const AdminConfig& admin);

}  // namespace wireup::spank
