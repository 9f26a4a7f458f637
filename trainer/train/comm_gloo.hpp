#pragma once
#include <string>

#include "comm.hpp"
#include "wireup/train/train_options.hpp"

namespace wireup::train {

struct WorldLayout {
  int rank = 0;
  int world = 1;
  int local_rank = 0;
  int local_world = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// Gloo groups over LibTorch's c10d, rendezvous through a TCPStore at
// MASTER_ADDR:MASTER_PORT (rank 0 serves it). Hybrid: shard groups are the
// ranks of one node, replicate groups the ranks with the same local rank.
CommGroups make_gloo_groups(const WorldLayout& w, Sharding sharding);

}  // namespace wireup::train
