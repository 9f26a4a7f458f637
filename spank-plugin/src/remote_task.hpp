#pragma once
#include "spank_api.hpp"

namespace wireup::spank {

// slurmstepd, once per step before tasks fork: probe the node, resolve the
// step's first node. Never fails (a failure here would drain the node).
void prepare_step(spank_t sp);

// slurmstepd, in each task before exec: set the task's variables. A task that
// cannot run as asked (EFA required but absent, no address for the first
// node) exits 1 with the reason on its stderr: the job fails, the node does not.
int wire_task(spank_t sp);

}  // namespace wireup::spank
