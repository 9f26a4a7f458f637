#pragma once
#include <ATen/core/Tensor.h>

#include <chrono>
#include <memory>
#include <string>

#include "comm/world_layout.hpp"

namespace wireup::train {

// Bulk transfers between ranks in a group of their own (the memory snapshots'
// replicas, checkpoint/memory_checkpointer.hpp): a background thread uses it
// while training's groups run their collectives. Byte tensors (uint8,
// contiguous, on the CPU). Every wait is bounded by the group's timeout.
class PeerComm {
 public:
  virtual ~PeerComm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Sends `send` to rank `to` while receiving `recv` (its size agreed
  // beforehand) from rank `from`; an undefined tensor is not sent or received.
  virtual void exchange(const at::Tensor& send, int to, const at::Tensor& recv, int from) = 0;
  // all[r*n, (r+1)*n) <- rank r's `mine` (n bytes).
  virtual void all_gather(const at::Tensor& mine, const at::Tensor& all) = 0;
  virtual void barrier() = 0;
};

// The job's peer group "KEY" over its TCPStore (Gloo between nodes, TCP; also
// within a node); every rank of the world makes it at the same point. One
// rank: nullptr. `timeout`: each transfer's bound. InputError where LibTorch
// has no Gloo (the pip wheels' builds).
std::unique_ptr<PeerComm> make_peer_comm(const WorldLayout& w, const std::string& key,
                                         std::chrono::milliseconds timeout);

}  // namespace wireup::train
