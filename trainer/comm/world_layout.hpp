#pragma once
#include <string>

namespace wireup::train {

// Who this process is among the ranks.
struct WorldLayout {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  int local_world = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Rank wiring from the environment spank_wireup, wireup-launch or torchrun
// set (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR/PORT).
// No RANK at all: a single process. Throws InputError naming what is missing
// or inconsistent, e.g. srun without --wireup.
WorldLayout world_from_env();

}  // namespace wireup::train
