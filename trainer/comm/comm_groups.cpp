#include "comm/comm.hpp"

#include <ATen/ATen.h>

namespace wireup::train {
namespace {

class Done final : public Pending {
 public:
  void wait() override {}
};

class SoloComm final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) override {
    if (!shard.is_same(full)) full.copy_(shard);
    return std::make_unique<Done>();
  }
  std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                              const at::Tensor& shard) override {
    if (!shard.is_same(full)) shard.copy_(full);
    return std::make_unique<Done>();
  }
  void all_reduce_sum(const at::Tensor&) override {}
  void broadcast(const at::Tensor&, int) override {}
  void barrier() override {}
};

}  // namespace

at::Tensor scalar_tensor(double v, at::Device device) {
  return at::full({1}, v, at::TensorOptions().dtype(at::kDouble).device(device));
}

CommGroups arrange_groups(const WorldLayout& w, Sharding sharding, std::shared_ptr<Comm> world,
                          const MakeGroup& make) {
  CommGroups g;
  g.world = std::move(world);
  switch (sharding) {
    case Sharding::Full:
      g.shard = g.world;
      g.replicate = make_solo_comm();
      break;
    case Sharding::None:
      g.shard = make_solo_comm();
      g.replicate = g.world;
      break;
    case Sharding::Hybrid: {
      const int node = w.rank / w.local_world, nodes = w.world / w.local_world;
      g.shard = make("shard" + std::to_string(node), w.local_rank, w.local_world);
      g.replicate = make("repl" + std::to_string(w.local_rank), node, nodes);
      break;
    }
  }
  return g;
}

std::shared_ptr<Comm> make_solo_comm() { return std::make_shared<SoloComm>(); }

CommGroups make_solo_groups() {
  auto solo = make_solo_comm();
  return {solo, solo, solo};
}

}  // namespace wireup::train
