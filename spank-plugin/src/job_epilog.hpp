#pragma once
#include "spank_api.hpp"
#include "wireup/settings.hpp"

namespace wireup::spank {

// slurmd's job epilog, as root, on each node of a job that ended (however it ended):
// removes the job's memory snapshots from the admin's memory_snapshot_dirs within the
// admin's budget (memory_snapshot_max_*) and logs what it removed or left, every
// user-controlled name escaped. Never fails: a failing epilog would drain the node.
void sweep_memory_snapshots(spank_t sp, const AdminConfig& admin);

}  // namespace wireup::spank
