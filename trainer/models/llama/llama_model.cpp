#include "models/llama/llama_model.hpp"

#include <ATen/ATen.h>

#include <cmath>

#include "ops/float8_linear.hpp"
#include "ops/fused_ops.hpp"

namespace wireup::train::llama {

std::vector<ParamSpec> embedding_specs(const ModelConfig& m) {
  return {{"tok_embeddings.weight", {m.vocab, m.hidden}}};
}

std::vector<ParamSpec> block_specs(const ModelConfig& m) {
  return {{"attention_norm.weight", {m.hidden}},
          {"attention.wqkv.weight", {m.q_dim() + 2 * m.kv_dim(), m.hidden}},
          {"attention.wo.weight", {m.hidden, m.q_dim()}},
          {"ffn_norm.weight", {m.hidden}},
          {"feed_forward.w13.weight", {2 * m.intermediate, m.hidden}},
          {"feed_forward.w2.weight", {m.hidden, m.intermediate}}};
}

std::vector<ParamSpec> head_specs(const ModelConfig& m) {
  if (m.tied) return {{"norm.weight", {m.hidden}}};  // the output is tok_embeddings.weight
  return {{"norm.weight", {m.hidden}}, {"output.weight", {m.vocab, m.hidden}}};
}

at::Tensor init_unit(const std::vector<ParamSpec>& specs, const ModelConfig& m,
                     std::uint64_t seed) {
  std::int64_t total = 0;
  for (const auto& s : specs) total += s.numel();
  at::Tensor flat = at::empty({total}, at::kFloat);
  auto gen = at::detail::createCPUGenerator(seed);
  const double out_std = 0.02 / std::sqrt(2.0 * static_cast<double>(m.layers));
  std::int64_t off = 0;
  for (const auto& s : specs) {
    at::Tensor v = flat.narrow(0, off, s.numel());
    if (s.name.size() >= 5 && s.name.compare(s.name.size() - 5, 5, ".bias") == 0) {
      v.zero_();
    } else if (s.shape.size() == 1) {
      v.fill_(1.0);
    } else {
      const bool out_proj =
          s.name.find("wo.") != std::string::npos || s.name.find("w2.") != std::string::npos;
      v.normal_(0.0, out_proj ? out_std : 0.02, gen);
    }
    off += s.numel();
  }
  return flat;
}

ops::Rope make_rope(const ModelConfig& m, std::int64_t seq, bool with_causal) {
  // theta^(-2i/d), Llama 3.1's scaling applied (model_config.cpp).
  return ops::make_rope(rope_inv_freq(m), seq, with_causal);
}

Documents make_documents(const at::Tensor& positions, const at::Tensor& segments,
                         at::ScalarType dtype) {
  return {positions, ops::document_mask(segments, dtype)};
}

at::Tensor embed(const std::vector<at::Tensor>& p, const at::Tensor& tokens) {
  return at::embedding(EmbeddingParams(p).embedding, tokens);
}

QkvHeads llama_qkv(const BlockParams& p, const at::Tensor& normed, const ModelConfig& m,
                   const Projection& proj) {
  const auto B = normed.size(0), T = normed.size(1);
  const auto hd = m.head_dim(), kv = m.kv_heads;
  // split, not narrow: its backward is one cat, where each narrow's would be
  // a zeroed full-size gradient summed with the others'.
  const auto qkv = proj(normed, p.wqkv).split_with_sizes({m.q_dim(), kv * hd, kv * hd}, -1);
  return {qkv[0].view({B, T, m.heads, hd}), qkv[1].view({B, T, kv, hd}),
          qkv[2].view({B, T, kv, hd})};
}

at::Tensor block(const std::vector<at::Tensor>& p, const at::Tensor& x, const ops::Rope& rope,
                 const ModelConfig& m, Float8Recipe float8, const Documents& docs,
                 BlockRecipe recipe, const lora::BlockAdapters* adapters) {
  using lora::FusedProjection;
  const auto adapted = [float8, adapters](FusedProjection site) {
    return [float8, adapters, site](const at::Tensor& in, const at::Tensor& w) {
      at::Tensor y =
          float8 == Float8Recipe::Off ? ops::linear(in, w) : ops::float8_linear(in, w, float8);
      if (adapters)
        if (at::Tensor d = adapters->delta(site, in); d.defined()) y = y + d;
      return y;
    };
  };
  const BlockProjections proj{adapted(FusedProjection::Qkv), adapted(FusedProjection::Out),
                              adapted(FusedProjection::GateUp), adapted(FusedProjection::Down)};
  const Attend attend = [&rope, &docs](const at::Tensor& q, const at::Tensor& k,
                                       const at::Tensor& v) {
    return docs.defined()
               ? ops::document_attention(ops::apply_rope(q, rope, docs.positions),
                                         ops::apply_rope(k, rope, docs.positions), v, docs.attend)
               : ops::causal_attention(ops::apply_rope(q, rope), ops::apply_rope(k, rope), v,
                                       rope.causal);
  };
  return recipe.compute(BlockParams(p), x, m, proj, recipe.inputs, attend);
}

at::Tensor decoder_block(const BlockParams& p, const at::Tensor& x, const ModelConfig& m,
                         const BlockProjections& proj, AttentionInputs inputs,
                         const Attend& attend) {
  // attention
  const auto [q, k, v] = inputs(p, ops::rms_norm(x, p.attention_norm, m.norm_eps), m, proj.qkv);
  const at::Tensor h = x + proj.out(attend(q, k, v), p.wo);
  // SwiGLU feed-forward
  const at::Tensor w13 = proj.gate_up(ops::rms_norm(h, p.ffn_norm, m.norm_eps), p.w13);
  return h + proj.down(ops::swiglu(w13), p.w2);
}

at::Tensor head_loss(const std::vector<at::Tensor>& p, const at::Tensor& x,
                     const at::Tensor& targets, const ModelConfig& m, const at::Tensor& trained,
                     double divisor) {
  const HeadParams head(p.at(0), p.at(1));
  if (!trained.defined()) {
    at::Tensor logits = ops::linear(ops::rms_norm(x, head.norm, m.norm_eps), head.output);
    return ops::cross_entropy(logits.reshape({-1, m.vocab}).to(at::kFloat), targets.reshape({-1}));
  }
  TORCH_CHECK(divisor > 0, "head_loss: a masked loss needs a divisor above 0");
  const at::Tensor rows = x.reshape({-1, x.size(-1)}), all_targets = targets.reshape({-1});
  const std::int64_t n = trained.numel();
  // No trained target: the first row's loss times zero, so that every
  // parameter still gets its (zero) gradient.
  const at::Tensor pick = n > 0 ? trained : at::zeros({1}, trained.options());
  at::Tensor logits =
      ops::linear(ops::rms_norm(rows.index_select(0, pick), head.norm, m.norm_eps), head.output);
  const at::Tensor mean =
      ops::cross_entropy(logits.to(at::kFloat), all_targets.index_select(0, pick));
  return mean * (static_cast<double>(n) / divisor);
}

at::Tensor head_pair_loss(const std::vector<at::Tensor>& p, const at::Tensor& x,
                          const at::Tensor& targets, const ModelConfig& m,
                          const at::Tensor& trained, const at::Tensor& sides, std::int64_t pairs,
                          const std::function<at::Tensor(const at::Tensor&)>& objective) {
  const HeadParams head(p.at(0), p.at(1));
  const at::Tensor rows = x.reshape({-1, x.size(-1)}), all_targets = targets.reshape({-1});
  const bool none = trained.numel() == 0;
  // No trained target: row 0 with a weight of zero, so that every parameter
  // still gets its (zero) gradient.
  const at::Tensor pick = none ? at::zeros({1}, trained.options()) : trained;
  at::Tensor logits =
      ops::linear(ops::rms_norm(rows.index_select(0, pick), head.norm, m.norm_eps), head.output);
  at::Tensor logps =
      -ops::cross_entropy_rows(logits.to(at::kFloat), all_targets.index_select(0, pick));
  if (none) logps = logps * 0.0;
  const at::Tensor at_side = none ? at::zeros({1}, sides.options()) : sides;
  const at::Tensor side_logps = at::zeros({2 * pairs}, logps.options().dtype(at::kDouble))
                                    .index_add(0, at_side, logps.to(at::kDouble));
  return objective(side_logps);
}

}  // namespace wireup::train::llama
