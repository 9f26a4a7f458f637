#include "models/llama/kv_decode.hpp"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "ops/fused_ops.hpp"

namespace wireup::train::llama {

namespace {

// x W^T. One row (a decoding step): a matrix-vector product, which BLAS runs
// at memory speed, where a one-row GEMM (oneDNN's, OpenBLAS's) was 1.5-4x
// slower on the output projection; more rows (the prompt): ops::linear.
at::Tensor project(const at::Tensor& x, const at::Tensor& w) {
  if (x.numel() != x.size(-1)) return ops::linear(x, w);
  auto shape = x.sizes().vec();
  shape.back() = w.size(0);
  return at::mv(w, x.reshape({-1})).view(shape);
}

}  // namespace

KvDecoder::KvDecoder(const ModelConfig& m, DecoderWeights w, std::int64_t capacity,
                     BlockRecipe recipe)
    : cfg_(m), w_(std::move(w)), recipe_(recipe), capacity_(capacity) {
  if (capacity < 1 || capacity > m.context)
    throw std::invalid_argument("KvDecoder: capacity " + std::to_string(capacity) + " outside 1.." +
                                std::to_string(m.context));
  if (static_cast<std::int64_t>(w_.blocks.size()) != m.layers)
    throw std::invalid_argument("KvDecoder: " + std::to_string(w_.blocks.size()) +
                                " blocks for a model of " + std::to_string(m.layers) + " layers");
  const at::Device device = w_.embedding.device();
  rope_ = ops::rope_to(make_rope(m, capacity, false), device);
  const auto options = w_.embedding.options();
  for (std::int64_t l = 0; l < m.layers; ++l) {
    keys_.push_back(at::empty({m.kv_heads, capacity, m.head_dim()}, options));
    values_.push_back(at::empty({m.kv_heads, capacity, m.head_dim()}, options));
  }
}

// q [T, nh, hd], k and v [T, kv, hd] of the new positions (RoPE applied):
// k and v join the cache, the queries attend to every cached position up to
// their own. Query heads sharing a KV head are stacked into one GEMM (head h
// uses KV head h / group, as the training attention does).
at::Tensor KvDecoder::attend(std::size_t layer, const at::Tensor& q, const at::Tensor& k,
                             const at::Tensor& v) {
  const auto T = q.size(0), kv = cfg_.kv_heads, hd = cfg_.head_dim();
  const auto g = cfg_.heads / kv, S = position_ + T;
  keys_[layer].narrow(1, position_, T).copy_(k.transpose(0, 1));
  values_[layer].narrow(1, position_, T).copy_(v.transpose(0, 1));
  const at::Tensor K = keys_[layer].narrow(1, 0, S), V = values_[layer].narrow(1, 0, S);
  const at::Tensor qg = q.reshape({T, kv, g, hd}).permute({1, 2, 0, 3}).reshape({kv, g * T, hd});
  at::Tensor scores = at::bmm(qg, K.transpose(1, 2)).mul_(1.0 / std::sqrt(static_cast<double>(hd)));
  if (T > 1) {  // query i (position position_+i) sees keys 0 .. position_+i
    const at::Tensor mask = at::full({T, S}, -INFINITY, scores.options()).triu_(position_ + 1);
    scores.view({kv, g, T, S}).add_(mask);
  }
  const at::Tensor o = at::bmm(at::softmax(scores, -1), V);  // [kv, g*T, hd]
  return o.view({kv, g, T, hd}).permute({2, 0, 1, 3}).reshape({1, T, cfg_.heads * hd});
}

at::Tensor KvDecoder::block(std::size_t layer, const at::Tensor& x, const ops::Rope& at_positions) {
  const Attend over_cache = [this, layer, &at_positions](const at::Tensor& q, const at::Tensor& k,
                                                         const at::Tensor& v) {
    return attend(layer, ops::apply_rope(q, at_positions)[0], ops::apply_rope(k, at_positions)[0],
                  v[0]);
  };
  return recipe_.compute(BlockParams(w_.blocks[layer]), x, cfg_,
                         {project, project, project, project}, recipe_.inputs, over_cache);
}

at::Tensor KvDecoder::feed(const at::Tensor& tokens, bool all_rows) {
  const auto T = tokens.size(0);
  if (tokens.dim() != 1 || T < 1 || position_ + T > capacity_)
    throw std::invalid_argument("KvDecoder::feed: " + std::to_string(T) + " tokens at position " +
                                std::to_string(position_) + " of " + std::to_string(capacity_));
  c10::InferenceMode inference;
  ops::Rope at_positions;
  at_positions.cis = rope_.cis.narrow(0, position_, T);
  at::Tensor x = at::embedding(w_.embedding, tokens.to(w_.embedding.device()).unsqueeze(0));
  for (std::size_t l = 0; l < w_.blocks.size(); ++l) x = block(l, x, at_positions);
  position_ += T;
  const at::Tensor rows = all_rows ? x[0] : x[0].narrow(0, T - 1, 1);
  const at::Tensor logits = project(ops::rms_norm(rows, w_.norm, cfg_.norm_eps), w_.output);
  return (all_rows ? logits : logits[0]).to(at::kFloat);
}

std::unique_ptr<TokenDecoder> skeleton_decoder(const ModelConfig& m,
                                               std::vector<std::vector<at::Tensor>> unit_params,
                                               std::int64_t capacity, BlockRecipe recipe) {
  if (unit_params.size() != static_cast<std::size_t>(m.layers) + 2)
    throw std::invalid_argument("decoder: " + std::to_string(unit_params.size()) +
                                " units for a model of " + std::to_string(m.layers) + " layers");
  DecoderWeights d;
  d.embedding = unit_params.front().at(0);
  for (std::size_t i = 1; i + 1 < unit_params.size(); ++i)
    d.blocks.push_back(std::move(unit_params[i]));
  const auto& head = unit_params.back();
  d.norm = head.at(0);
  d.output = m.tied ? d.embedding : head.at(1);
  return std::make_unique<KvDecoder>(m, std::move(d), capacity, recipe);
}

}  // namespace wireup::train::llama
