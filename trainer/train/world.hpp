#pragma once
#include "comm.hpp"

namespace wireup::train {

// Rank wiring from the environment spank_wireup, wireup-launch or torchrun
// set (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR/PORT).
// No RANK at all: a single process. Throws InputError naming what is missing
// or inconsistent, e.g. srun without --wireup.
WorldLayout world_from_env();

}  // namespace wireup::train
