#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

#include "models/model_config.hpp"
#include "models/model_spec.hpp"

// The Hugging Face adapter of Qwen3 (Qwen3ForCausalLM) and Qwen2.5
// (Qwen2ForCausalLM): the Llama's names and layouts (models/llama/llama_hf.hpp:
// Q/K rows between Meta's rotary pairs and HF's halves), sized by head_dim,
// and then a block's own tensors, in its flat buffer's order:
//   qwen3  model.layers.i.self_attn.q_norm.weight, k_norm.weight [head_dim]
//          (their elements in the same per-head order as the Q/K rows)
//   qwen2  model.layers.i.self_attn.{q,k,v}_proj.bias (Q and K permuted as
//          their rows)
namespace wireup::train::qwen {

std::vector<HfTensor> unit_tensors(const ModelConfig& m, std::size_t unit);
std::vector<at::Tensor> unit_to_hf(const ModelConfig& m, std::size_t unit, const at::Tensor& flat);
void unit_from_hf(const ModelConfig& m, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read);

}  // namespace wireup::train::qwen
