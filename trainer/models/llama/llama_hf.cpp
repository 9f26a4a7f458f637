#include "models/llama/llama_hf.hpp"

#include <ATen/ATen.h>

#include <stdexcept>

namespace wireup::train::llama {
namespace {

enum class Kind { Embedding, Block, Head };

Kind kind_of(const ModelConfig& m, std::size_t unit) {
  if (unit == 0) return Kind::Embedding;
  if (unit <= static_cast<std::size_t>(m.layers)) return Kind::Block;
  if (unit == static_cast<std::size_t>(m.layers) + 1) return Kind::Head;
  throw std::out_of_range("hf layout: unit " + std::to_string(unit) + " of a " +
                          std::to_string(m.layers) + "-layer model");
}

std::int64_t numel_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace

std::vector<HfTensor> unit_tensors(const ModelConfig& m, std::size_t unit) {
  const auto H = m.hidden, I = m.intermediate, kv = m.kv_dim(), V = m.vocab, Q = m.q_dim();
  switch (kind_of(m, unit)) {
    case Kind::Embedding:
      return {{"model.embed_tokens.weight", {V, H}}};
    case Kind::Head:
      if (m.tied) return {{"model.norm.weight", {H}}};  // lm_head is embed_tokens
      return {{"model.norm.weight", {H}}, {"lm_head.weight", {V, H}}};
    case Kind::Block: {
      const std::string p = "model.layers." + std::to_string(unit - 1) + ".";
      return {
          {p + "input_layernorm.weight", {H}},      {p + "self_attn.q_proj.weight", {Q, H}},
          {p + "self_attn.k_proj.weight", {kv, H}}, {p + "self_attn.v_proj.weight", {kv, H}},
          {p + "self_attn.o_proj.weight", {H, Q}},  {p + "post_attention_layernorm.weight", {H}},
          {p + "mlp.gate_proj.weight", {I, H}},     {p + "mlp.up_proj.weight", {I, H}},
          {p + "mlp.down_proj.weight", {H, I}}};
    }
  }
  return {};
}

at::Tensor rope_rows_to_hf(const at::Tensor& w, std::int64_t n_heads) {
  const auto rows = w.size(0), cols = w.size(1), hd = rows / n_heads;
  // row h*hd + 2j + c  ->  row h*hd + c*hd/2 + j
  return w.reshape({n_heads, hd / 2, 2, cols}).transpose(1, 2).reshape({rows, cols}).contiguous();
}

at::Tensor rope_rows_from_hf(const at::Tensor& w, std::int64_t n_heads) {
  const auto rows = w.size(0), cols = w.size(1), hd = rows / n_heads;
  return w.reshape({n_heads, 2, hd / 2, cols}).transpose(1, 2).reshape({rows, cols}).contiguous();
}

std::vector<at::Tensor> slice_to_hf(const std::vector<HfTensor>& tensors, std::size_t unit,
                                    const at::Tensor& flat, const RotaryHeads& heads) {
  std::int64_t total = 0;
  for (const auto& t : tensors) total += numel_of(t.shape);
  if (flat.dim() != 1 || flat.numel() < total)
    throw std::invalid_argument("hf layout: unit " + std::to_string(unit) + " buffer has " +
                                std::to_string(flat.numel()) + " elements, needs " +
                                std::to_string(total));
  // The HF tensors of a unit cover its flat buffer in the same order (fused
  // projections split into several tensors): slicing in order is enough.
  std::vector<at::Tensor> out;
  std::int64_t off = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto n = numel_of(tensors[i].shape);
    at::Tensor t = flat.narrow(0, off, n).to(at::kFloat).contiguous();
    if (const auto h = heads(i)) t = rope_rows_to_hf(t.view({tensors[i].shape[0], -1}), h);
    out.push_back(t.view(tensors[i].shape).contiguous());
    off += n;
  }
  return out;
}

void fill_from_hf(const std::vector<HfTensor>& tensors, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read, const RotaryHeads& heads) {
  std::int64_t total = 0;
  for (const auto& t : tensors) total += numel_of(t.shape);
  if (flat.dim() != 1 || flat.numel() != total || flat.scalar_type() != at::kFloat ||
      !flat.is_contiguous())
    throw std::invalid_argument("hf layout: unit " + std::to_string(unit) +
                                " needs a contiguous fp32 buffer of " + std::to_string(total) +
                                " elements");
  std::int64_t off = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto n = numel_of(tensors[i].shape);
    at::Tensor slot = flat.narrow(0, off, n).view(tensors[i].shape);
    read(i, slot);
    if (const auto h = heads(i)) {
      at::Tensor rows = slot.view({tensors[i].shape[0], -1});
      rows.copy_(rope_rows_from_hf(rows, h));
    }
    off += n;
  }
}

namespace {

// The Llama's rotary rows: a block's Q (query heads) and K (KV heads) weights.
RotaryHeads llama_rotary(const ModelConfig& m, std::size_t unit) {
  const bool block = kind_of(m, unit) == Kind::Block;
  const std::int64_t heads = m.heads, kv = m.kv_heads;
  return [block, heads, kv](std::size_t i) -> std::int64_t {
    if (!block) return 0;
    return i == 1 ? heads : i == 2 ? kv : 0;
  };
}

}  // namespace

std::vector<at::Tensor> unit_to_hf(const ModelConfig& m, std::size_t unit, const at::Tensor& flat) {
  return slice_to_hf(unit_tensors(m, unit), unit, flat, llama_rotary(m, unit));
}

void unit_from_hf(const ModelConfig& m, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read) {
  fill_from_hf(unit_tensors(m, unit), unit, flat, read, llama_rotary(m, unit));
}

at::Tensor adapter_rows(const ModelConfig& m, lora::Target t, const at::Tensor& rows, bool to_hf) {
  if (t != lora::Target::Q && t != lora::Target::K) return rows.contiguous();
  const std::int64_t heads = t == lora::Target::Q ? m.heads : m.kv_heads;
  return to_hf ? rope_rows_to_hf(rows, heads) : rope_rows_from_hf(rows, heads);
}

}  // namespace wireup::train::llama
