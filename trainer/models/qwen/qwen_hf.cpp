#include "models/qwen/qwen_hf.hpp"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

#include "models/llama/llama_hf.hpp"
#include "models/qwen/qwen_family.hpp"

namespace wireup::train::qwen {
namespace {

bool is_block(const ModelConfig& m, std::size_t unit) {
  return unit >= 1 && unit <= static_cast<std::size_t>(m.layers);
}

// A block's HF tensors that are rotary rows, and of how many heads each: the
// Q and K weights (the Llama's) and the family's own Q/K biases or per-head
// norms (a norm: one head's elements).
llama::RotaryHeads qwen_rotary(const ModelConfig& m, std::size_t unit) {
  const QwenBlock t = qwen_block(m);
  const bool block = is_block(m, unit), extras = t.qkv_bias || t.qk_norm;
  const std::int64_t heads = m.heads, kv = m.kv_heads;
  const std::int64_t q_extra = t.qkv_bias ? heads : 1, k_extra = t.qkv_bias ? kv : 1;
  return [=](std::size_t i) -> std::int64_t {
    if (!block) return 0;
    if (i == 1) return heads;
    if (i == 2) return kv;
    if (extras && i == 9) return q_extra;
    if (extras && i == 10) return k_extra;
    return 0;
  };
}

}  // namespace

std::vector<HfTensor> unit_tensors(const ModelConfig& m, std::size_t unit) {
  std::vector<HfTensor> out = llama::unit_tensors(m, unit);
  if (!is_block(m, unit)) return out;
  const QwenBlock t = qwen_block(m);
  const std::string p = "model.layers." + std::to_string(unit - 1) + ".self_attn.";
  if (t.qkv_bias) {
    out.push_back({p + "q_proj.bias", {m.q_dim()}});
    out.push_back({p + "k_proj.bias", {m.kv_dim()}});
    out.push_back({p + "v_proj.bias", {m.kv_dim()}});
  }
  if (t.qk_norm) {
    out.push_back({p + "q_norm.weight", {m.head_dim()}});
    out.push_back({p + "k_norm.weight", {m.head_dim()}});
  }
  return out;
}

std::vector<at::Tensor> unit_to_hf(const ModelConfig& m, std::size_t unit, const at::Tensor& flat) {
  return llama::slice_to_hf(unit_tensors(m, unit), unit, flat, qwen_rotary(m, unit));
}

void unit_from_hf(const ModelConfig& m, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read) {
  llama::fill_from_hf(unit_tensors(m, unit), unit, flat, read, qwen_rotary(m, unit));
}

}  // namespace wireup::train::qwen
