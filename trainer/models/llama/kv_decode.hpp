#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "models/llama/llama_model.hpp"
#include "models/model_config.hpp"
#include "models/model_spec.hpp"

// Decoding with a KV cache: the Llama of llama_model.hpp (and the families
// built on its skeleton, with their own blocks) (the ops rms_norm,
// linear, swiglu, apply_rope pieces), one sequence, each position's keys and
// values kept so a new token costs one row through every layer. Written in
// ATen ops on whatever device the weights are on (CPU, CUDA). Inference only.
namespace wireup::train::llama {

// The parameters as the FSDP units hold them (llama_model.hpp's specs).
struct DecoderWeights {
  at::Tensor embedding;                         // [V, H]
  std::vector<std::vector<at::Tensor>> blocks;  // block_specs order, one per layer
  at::Tensor norm;                              // [H]
  at::Tensor output;                            // [V, H]; tied: the embedding
};

// The decoder of a family on the Llama's skeleton: DecoderWeights from the
// units' parameters (ModelSpec::decoder's contract).
std::unique_ptr<TokenDecoder> skeleton_decoder(const ModelConfig& m,
                                               std::vector<std::vector<at::Tensor>> unit_params,
                                               std::int64_t capacity, BlockRecipe recipe);

class KvDecoder final : public TokenDecoder {
 public:
  // Room for `capacity` positions (prompt and generated tokens), at most the
  // model's context; the cache is allocated here, 2 * layers * capacity *
  // kv_dim values in the weights' dtype. `recipe`: the family's block
  // (llama_model.hpp), its own parameters after the Llama's.
  KvDecoder(const ModelConfig& m, DecoderWeights w, std::int64_t capacity, BlockRecipe recipe = {});

  // Runs `tokens` (int64 [T], T >= 1, position() + T <= capacity()) at
  // positions position() .. position()+T-1, keeping their keys and values.
  // Returns fp32 logits: of the last position [V], or with `all_rows` of
  // each [T, V].
  at::Tensor feed(const at::Tensor& tokens, bool all_rows = false) override;

  // Forgets every position (the next feed starts at position 0).
  void reset() override { position_ = 0; }
  std::int64_t position() const override { return position_; }
  std::int64_t capacity() const override { return capacity_; }

 private:
  at::Tensor block(std::size_t layer, const at::Tensor& x, const ops::Rope& at_positions);
  at::Tensor attend(std::size_t layer, const at::Tensor& q, const at::Tensor& k,
                    const at::Tensor& v);

  ModelConfig cfg_;
  DecoderWeights w_;
  BlockRecipe recipe_;
  std::int64_t capacity_ = 0, position_ = 0;
  ops::Rope rope_;                         // [capacity] rows, no mask
  std::vector<at::Tensor> keys_, values_;  // per layer [kv_heads, capacity, head_dim]
};

}  // namespace wireup::train::llama
