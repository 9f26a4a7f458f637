#pragma once
#include "models/model_family.hpp"

// Qwen3 (dense) and Qwen2.5's plain facts; their computation is qwen_spec.hpp.
namespace wireup::train::qwen {

const ModelFamily& qwen3_family();
const ModelFamily& qwen2_family();

// What sets a Qwen block apart from the Llama's: per-head RMSNorm of Q and K
// before RoPE (Qwen3), biases on the Q, K and V projections (Qwen2.5).
struct QwenBlock {
  bool qk_norm;
  bool qkv_bias;
};
QwenBlock qwen_block(const ModelConfig& m);  // of m.family: qwen3 or qwen2

}  // namespace wireup::train::qwen
