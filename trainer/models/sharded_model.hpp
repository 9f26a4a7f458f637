#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "fsdp/fsdp_model.hpp"
#include "models/model_spec.hpp"

namespace wireup::train {

// A model of any registered family as FSDP units: the family's units, initial
// values and computation (its ModelSpec) on the sharding engine (FsdpModel).
// What train, eval, export and generate build.
class ShardedModel {
 public:
  ShardedModel(const ModelConfig& m, const ModelSpec& spec, const CommGroups& groups,
               const ModelOptions& o, std::uint64_t seed);
  // The family model_spec(m) names (models/model_registry.hpp).
  ShardedModel(const ModelConfig& m, const CommGroups& groups, const ModelOptions& o,
               std::uint64_t seed);

  // Mean loss of one micro-batch (tokens [B, T+1]); with `backward`, the
  // gradient of loss*grad_scale is added to every unit's grad().
  double step(const at::Tensor& tokens, bool backward, double grad_scale);
  // The same for a micro-batch that may be packed: a masked one's loss is
  // the sum of its trained targets' cross-entropy over `loss_divisor` (> 0),
  // its positions and attention per conversation where it has segments.
  double step(const ModelBatch& batch, bool backward, double grad_scale, double loss_divisor = 0);

  // Every unit's parameters to the family's random values for `seed` (each
  // unit from its own seed: the same values whatever the world size); the
  // constructor's with ModelOptions::random_init. LoRA's adapters to their
  // initial values (lora/lora_units.hpp: the adapted model equals the base).
  void initialize(std::uint64_t seed);
  // The adapters alone (LoRA): after the base's weights are loaded.
  void initialize_adapters(std::uint64_t seed);

  // Every unit: the family's, then (LoRA) the adapters'.
  std::vector<std::unique_ptr<FlatUnit>>& units() { return fsdp_.units(); }
  // The family's units, in its order (what its HF adapter and a full
  // checkpoint hold): all of units() without LoRA.
  const std::vector<FlatUnit*>& base_units() const { return base_; }
  // The units the optimizer updates and checkpoints save: all without LoRA,
  // the adapters with it.
  const std::vector<FlatUnit*>& trainable_units() const { return trainable_; }
  bool lora() const { return base_units_ != fsdp_.plan().size(); }
  const ModelConfig& config() const { return cfg_; }
  const ModelSpec& spec() const { return spec_; }
  at::Device device() const { return fsdp_.options().device; }
  // The attention of packed micro-batches with segments (chosen, and on CUDA
  // probed, on first use).
  const ops::DocumentAttentionChoice& document_attention() {
    return compute_->document_attention();
  }

  // Parameters + gradients + AdamW moments this rank holds, in bytes (built
  // for inference: the parameters alone).
  std::int64_t state_bytes() const { return fsdp_.state_bytes(); }

 private:
  ModelConfig cfg_;
  const ModelSpec& spec_;
  std::size_t base_units_;
  FsdpModel fsdp_;
  std::vector<FlatUnit*> base_, trainable_;
  std::unique_ptr<ModelCompute> compute_;
};

}  // namespace wireup::train
