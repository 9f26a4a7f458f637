#pragma once
#include <ATen/core/Tensor.h>

#include <memory>
#include <optional>
#include <vector>

#include "fsdp/flat_unit.hpp"
#include "model/batch_tokens.hpp"
#include "model/llama_model.hpp"

namespace wireup::train {

struct FsdpOptions {
  bool activation_checkpointing = false;      // recompute each unit in backward
  bool prefetch = true;                       // gather unit i+1 (i-1 in backward) while i computes
  at::ScalarType compute_dtype = at::kFloat;  // bf16 on GPU
  at::Device device = at::kCPU;
  Float8Recipe float8 = Float8Recipe::Off;  // the blocks' projections in float8 (GPU)
  // false: the parameters start as zeros, for a caller that loads every one
  // of them next (eval, generate); true: llama::init_unit's random values.
  bool random_init = true;
  // Inference (eval, generate): the units keep no gradient shard (FlatUnit's
  // UnitUse), and step() with backward is refused.
  UnitUse use = UnitUse::Training;
};

// A Llama as FSDP units: [embedding] [block 0] ... [block L-1] [norm + output].
// Forward and backward gather each unit just in time and free it after; each
// unit's gradient is reduce-scattered into its fp32 shard as soon as it exists.
// Tied embeddings (ModelConfig::tied): the head has only the final norm; it
// gathers the embedding unit with its own and projects with that matrix, and
// the embedding unit's gradient is the sum of both uses (the head's part
// reduce-scattered when the head's backward ends, the lookup's at the end of
// backward): one parameter, stored and updated once.
class FsdpLlama {
 public:
  FsdpLlama(const ModelConfig& m, const CommGroups& groups, const FsdpOptions& o,
            std::uint64_t seed);

  // Mean loss of one micro-batch (tokens [B, T+1]); with `backward`, the
  // gradient of loss*grad_scale is added to every unit's grad().
  double step(const at::Tensor& tokens, bool backward, double grad_scale);
  // The same for a micro-batch that may be packed: a masked one's loss is
  // the sum of its trained targets' cross-entropy over `loss_divisor` (> 0),
  // its positions and attention per conversation where it has segments.
  double step(const ModelBatch& batch, bool backward, double grad_scale, double loss_divisor = 0);

  // Every unit's parameters to llama::init_unit's random values for `seed`
  // (each unit from its own seed: the same values whatever the world size);
  // the constructor's with FsdpOptions::random_init.
  void initialize(std::uint64_t seed);

  std::vector<std::unique_ptr<FlatUnit>>& units() { return units_; }
  const ModelConfig& config() const { return cfg_; }
  at::Device device() const { return opt_.device; }
  // The attention of packed micro-batches with segments (chosen, and on CUDA
  // probed, on first use; llama::document_attention_for).
  const llama::DocumentAttentionChoice& document_attention();

  // Parameters + gradients + AdamW moments this rank holds, in bytes (built
  // for inference: the parameters alone).
  std::int64_t state_bytes() const;

 private:
  ModelConfig cfg_;
  FsdpOptions opt_;
  std::vector<std::unique_ptr<FlatUnit>> units_;
  llama::Rope rope_;
  std::optional<llama::DocumentAttentionChoice> document_attention_;
};

}  // namespace wireup::train
