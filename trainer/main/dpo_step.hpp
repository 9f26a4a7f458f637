#pragma once
#include <memory>
#include <vector>

#include "batch/batch_tokens.hpp"
#include "checkpoint/dpo_meta.hpp"
#include "comm/comm.hpp"
#include "comm/world_layout.hpp"
#include "config/train_options.hpp"
#include "models/sharded_model.hpp"
#include "preference/dpo_objective.hpp"

// DPO on packed pairs (docs/dpo.md), read top to bottom: each micro-batch's
// reference log-probs (a forward without gradients), then the policy's
// forward, whose head sums its completion tokens' log-probs per side and
// hands them to dpo_objective.hpp's micro-batch objective, and its backward.
namespace wireup::train {

// The reference the policy's log-ratios are taken against: the policy itself
// with LoRA's adapters off (no second copy), or a model of its own, built for
// inference (no gradients, no moments) and sharded like the policy.
class DpoReference {
 public:
  // The policy with its adapters off (LoRA's base).
  explicit DpoReference(ShardedModel& policy);
  // A separate model: training's frozen copy, eval's loaded reference.
  explicit DpoReference(std::unique_ptr<ShardedModel> model);
  ~DpoReference();
  // The summed completion log-probs of each side of the micro-batch's pairs
  // ([2q] chosen, [2q+1] rejected).
  std::vector<double> side_logps(const ModelBatch& batch);
  // "adapters_off" or "frozen_copy"
  const char* kind() const { return copy_ ? "frozen_copy" : "adapters_off"; }
  bool adapters_off() const { return !copy_; }
  // The separate model's parameters on this rank, in bytes (0: adapters off).
  std::int64_t state_bytes() const;

 private:
  ShardedModel* policy_ = nullptr;
  std::unique_ptr<ShardedModel> copy_;
};

// Training's reference: with LoRA the base (adapters off); full, a frozen
// copy of the start weights (--init_from_hf, --init_from_checkpoint, or the
// seed's values).
std::unique_ptr<DpoReference> training_reference(const TrainOptions& o, const WorldLayout& w,
                                                 const CommGroups& groups, ShardedModel& policy);

// What checkpoints and memory snapshots record of a DPO run: its settings
// and reference (a frozen copy's start weights: "hf:DIR", "checkpoint:DIR" or
// "seed:N", with DIR's fingerprint), which a resume must find unchanged.
DpoMeta dpo_meta(const TrainOptions& o, const DpoReference& reference);

// An optimizer step's (or a validation pass's) pairs: every micro-batch's
// reference pass, then the policy's forward and, with `backward`, its
// backward; the metrics summed over micro-batches and the world. Each
// micro-batch's gradient is its part of the mean over every pair of the
// step on every rank (grad_scale 1: the gradient collectives sum over ranks).
struct DpoPass {
  preference::DpoMetrics metrics;
  std::int64_t pairs = 0;  // over the world
};
DpoPass dpo_pass(ShardedModel& policy, DpoReference& reference,
                 const std::vector<ModelBatch>& micro, const preference::DpoSettings& s,
                 Comm& world, bool backward);

}  // namespace wireup::train
