// Built in place of comm_gloo.cpp when LibTorch ships no Gloo headers (the
// pip wheels' LibTorch): one CPU rank needs no collectives at all.
#include "comm/comm_gloo.hpp"
#include "comm/peer_comm.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

CommGroups make_gloo_groups(const WorldLayout& w, Sharding) {
  if (w.world == 1) return make_solo_groups();
  throw InputError("--device cpu with WORLD_SIZE " + std::to_string(w.world) +
                   ": this wireup-train was built against a LibTorch without Gloo headers, so "
                   "CPU training runs one rank only; use --device cuda, or build against a "
                   "LibTorch with Gloo (Debian's libtorch-dev + libgloo-dev)");
}

std::unique_ptr<PeerComm> make_peer_comm(const WorldLayout& w, const std::string& key,
                                         std::chrono::milliseconds) {
  if (w.world == 1) return nullptr;
  throw InputError("memory snapshots with WORLD_SIZE " + std::to_string(w.world) +
                   ": their replicas travel over Gloo (group " + key +
                   "), and this wireup-train was built against a LibTorch without Gloo headers; "
                   "set --memory_checkpoint_freq 0, or build against a LibTorch with Gloo");
}

}  // namespace wireup::train
