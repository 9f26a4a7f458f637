#include "models/qwen/qwen_hf.hpp"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

#include "models/llama/llama_hf.hpp"

namespace wireup::train::qwen {
namespace {

bool is_block(const ModelConfig& m, std::size_t unit) {
  return unit >= 1 && unit <= static_cast<std::size_t>(m.layers);
}

std::int64_t numel_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

// A block's HF tensors that are rows of a rotary projection, and how many
// heads each holds: the Q and K weights (the Llama's) and the family's own
// Q/K biases or norms (the norms: one head's elements).
std::int64_t rotary_heads(const ModelConfig& m, std::size_t index) {
  const FamilyTraits& t = family_traits(m.family);
  if (index == 1) return m.heads;
  if (index == 2) return m.kv_heads;
  if (index == 9 && (t.qkv_bias || t.qk_norm)) return t.qkv_bias ? m.heads : 1;
  if (index == 10 && (t.qkv_bias || t.qk_norm)) return t.qkv_bias ? m.kv_heads : 1;
  return 0;
}

}  // namespace

std::vector<HfTensor> unit_tensors(const ModelConfig& m, std::size_t unit) {
  std::vector<HfTensor> out = llama::unit_tensors(m, unit);
  if (!is_block(m, unit)) return out;
  const FamilyTraits& t = family_traits(m.family);
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
  const auto specs = unit_tensors(m, unit);
  std::int64_t total = 0;
  for (const auto& s : specs) total += numel_of(s.shape);
  if (flat.dim() != 1 || flat.numel() < total)
    throw std::invalid_argument("hf layout: unit " + std::to_string(unit) + " buffer has " +
                                std::to_string(flat.numel()) + " elements, needs " +
                                std::to_string(total));
  // In the flat buffer's order; Q/K rows (and their biases and norms) to HF's halves.
  std::vector<at::Tensor> out;
  std::int64_t off = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto n = numel_of(specs[i].shape);
    at::Tensor t = flat.narrow(0, off, n).to(at::kFloat).contiguous();
    if (const auto heads = is_block(m, unit) ? rotary_heads(m, i) : 0)
      t = llama::rope_rows_to_hf(t.view({specs[i].shape[0], -1}), heads);
    out.push_back(t.view(specs[i].shape).contiguous());
    off += n;
  }
  return out;
}

void unit_from_hf(const ModelConfig& m, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read) {
  const auto specs = unit_tensors(m, unit);
  std::int64_t total = 0;
  for (const auto& s : specs) total += numel_of(s.shape);
  if (flat.dim() != 1 || flat.numel() != total || flat.scalar_type() != at::kFloat ||
      !flat.is_contiguous())
    throw std::invalid_argument("hf layout: unit " + std::to_string(unit) +
                                " needs a contiguous fp32 buffer of " + std::to_string(total) +
                                " elements");
  std::int64_t off = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto n = numel_of(specs[i].shape);
    at::Tensor slot = flat.narrow(0, off, n).view(specs[i].shape);
    read(i, slot);
    if (const auto heads = is_block(m, unit) ? rotary_heads(m, i) : 0) {
      at::Tensor rows = slot.view({specs[i].shape[0], -1});
      rows.copy_(llama::rope_rows_from_hf(rows, heads));
    }
    off += n;
  }
}

}  // namespace wireup::train::qwen
