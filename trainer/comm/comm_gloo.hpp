#pragma once
#include "comm/comm.hpp"
#include "config/sharding.hpp"

namespace wireup::train {

// Gloo groups over LibTorch's c10d, rendezvous through a TCPStore at
// MASTER_ADDR:MASTER_PORT (rank 0 serves it). Hybrid: shard groups are the
// ranks of one node, replicate groups the ranks with the same local rank.
// One rank needs no Gloo: builds whose LibTorch ships no Gloo headers (the
// pip wheels) train on CPU at world size 1 only (comm_gloo_stub.cpp).
CommGroups make_gloo_groups(const WorldLayout& w, Sharding sharding);

}  // namespace wireup::train
