#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

#include "fsdp/param_spec.hpp"
#include "models/llama/llama_model.hpp"
#include "models/model_config.hpp"

// Qwen3 and Qwen2.5 (dense): decoders on the Llama's skeleton (embedding,
// pre-norm blocks with SwiGLU, final norm, head) whose attention inputs differ.
// A block holds the Llama's six parameters (Q/K/V and output projections
// sized by head_dim, which Qwen3 sets apart from hidden / heads) and then its
// own:
//   qwen3  attention.q_norm.weight [head_dim], attention.k_norm.weight
//          [head_dim]: RMSNorm of each query and key head, before RoPE
//   qwen2  attention.bqkv.bias [q_dim + 2 kv_dim]: the Q, K and V biases
namespace wireup::train::qwen {

std::vector<ParamSpec> qwen3_block_specs(const ModelConfig& m);
std::vector<ParamSpec> qwen2_block_specs(const ModelConfig& m);

// The attention inputs (llama_model.hpp's AttentionInputs) of each.
llama::QkvHeads qwen3_qkv(const llama::BlockParams& p, const at::Tensor& normed,
                          const ModelConfig& m, const llama::Projection& proj);
llama::QkvHeads qwen2_qkv(const llama::BlockParams& p, const at::Tensor& normed,
                          const ModelConfig& m, const llama::Projection& proj);

}  // namespace wireup::train::qwen
