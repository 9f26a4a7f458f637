#pragma once
#include <ATen/core/Tensor.h>

#include "comm/world_layout.hpp"
#include "config/sharding.hpp"

#include <functional>
#include <memory>
#include <string>

namespace wireup::train {

// A collective in flight; wait() before touching its output.
class Pending {
 public:
  virtual ~Pending() = default;
  virtual void wait() = 0;
};

// The collectives FSDP needs, over one group of ranks. Backends: Gloo (CPU,
// LibTorch's c10d) and NCCL (GPU). Tensors are contiguous and 1-D.
class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // full[r*n, (r+1)*n) <- rank r's shard (n elements); may run in the background.
  virtual std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) = 0;
  // shard <- sum over ranks of full[rank*n, (rank+1)*n); may run in the
  // background: `full` must stay alive and `shard` unread until wait().
  virtual std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                                      const at::Tensor& shard) = 0;
  virtual void all_reduce_sum(const at::Tensor& t) = 0;
  virtual void broadcast(const at::Tensor& t, int root) = 0;
  virtual void barrier() = 0;

  // A member of this group known to have ended (its process gone, or a
  // zombie), as "rank K (pid P)"; empty when none is known. Only a group
  // whose members share this node can tell (shared memory); the others
  // return empty. Safe to call from another thread during a collective.
  virtual std::string exited_member() const { return {}; }
};

// The groups a rank talks to: everyone, the ranks that share its parameters'
// shards, and the ranks holding the same shard (hybrid sharding; else size 1).
struct CommGroups {
  std::shared_ptr<Comm> world;
  std::shared_ptr<Comm> shard;
  std::shared_ptr<Comm> replicate;
};

// A one-element tensor for scalar collectives, on the device the group's
// backend works on (CPU for Gloo, the current GPU for NCCL).
at::Tensor scalar_tensor(double v, at::Device device);

// Makes one sub-group: a key unique to it, this rank's rank in it, its size.
using MakeGroup = std::function<std::shared_ptr<Comm>(const std::string& key, int rank, int size)>;

// The shard and replicate groups of a sharding strategy around `world`, for
// any backend. Hybrid: shard groups are the ranks of one node, replicate
// groups the ranks with the same local rank (ranks are node-major).
CommGroups arrange_groups(const WorldLayout& w, Sharding sharding, std::shared_ptr<Comm> world,
                          const MakeGroup& make);

// A group of one: every collective is a copy or nothing.
std::shared_ptr<Comm> make_solo_comm();
// Every group solo: a world of one rank, whatever the backend.
CommGroups make_solo_groups();

}  // namespace wireup::train
