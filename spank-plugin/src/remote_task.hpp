#pragma once
#include "spank_api.hpp"

namespace wireup::spank {

// slurmstepd, once per step before tasks fork: probe the node, resolve the
// step's first node. Never fails (a failure here would drain the node).
void prepare_step(spank_t sp);

// slurmstepd, in each task before exec: set the task's variables. Returns
// -1 only for a job that cannot run as asked (this fails the job, not the node).
int wire_task(spank_t sp);

}  // namespace wireup::spank
