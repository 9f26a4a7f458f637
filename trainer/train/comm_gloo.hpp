#pragma once
#include <c10/util/intrusive_ptr.h>

#include <string>

#include "comm.hpp"
#include "wireup/train/train_options.hpp"

namespace c10d {
class Store;
}

namespace wireup::train {

// Gloo groups over LibTorch's c10d, rendezvous through a TCPStore at
// MASTER_ADDR:MASTER_PORT (rank 0 serves it). Hybrid: shard groups are the
// ranks of one node, replicate groups the ranks with the same local rank.
CommGroups make_gloo_groups(const WorldLayout& w, Sharding sharding);

// The job's TCPStore at MASTER_ADDR:MASTER_PORT: served by rank 0, unless the
// launcher serves it already (TORCHELASTIC_USE_AGENT_STORE=True, as torchrun
// and wireup-launch --agent-store set), then every rank is a client.
c10::intrusive_ptr<c10d::Store> open_job_store(const WorldLayout& w);

}  // namespace wireup::train
