#pragma once
#include "spank_api.hpp"

namespace wireup::spank {

// Registers --wireup and its sub-options. Done in every context that parses
// options (srun, sbatch/salloc, slurmstepd): one left out makes the option
// "unrecognized" there.
void register_options(spank_t sp);

}  // namespace wireup::spank
