#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

#include "config/component_configs.hpp"
#include "fsdp/flat_unit.hpp"

namespace wireup::train {

// AdamW (torch.optim.AdamW's update, decoupled decay on every parameter) on
// the fp32 shards each rank owns; its moments are sharded the same way.
class ShardedAdamW {
 public:
  ShardedAdamW(std::vector<FlatUnit*> units, AdamWConfig c);
  // One update with learning rate `lr`; gradients are multiplied by
  // `grad_scale` first (clipping). Zeroes the gradients afterwards.
  void step(double lr, double grad_scale);
  std::int64_t steps() const { return t_; }
  const AdamWConfig& config() const { return c_; }

  std::vector<at::Tensor>& exp_avg() { return m_; }
  std::vector<at::Tensor>& exp_avg_sq() { return v_; }
  void set_steps(std::int64_t t) { t_ = t; }
  // As constructed: moments zero, no step taken, gradients zeroed.
  void reset();

 private:
  void fused_step(double lr, double grad_scale);  // CUDA shards, LibTorch 2.x

  std::vector<FlatUnit*> units_;
  AdamWConfig c_;
  std::vector<at::Tensor> m_, v_;
  std::int64_t t_ = 0;
};

// sqrt of the sum of squares of every gradient shard, over the shard group.
double global_grad_norm(const std::vector<FlatUnit*>& units, Comm& shard_comm);

}  // namespace wireup::train
