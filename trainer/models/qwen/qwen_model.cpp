#include "models/qwen/qwen_model.hpp"

#include <ATen/ATen.h>

#include "ops/fused_ops.hpp"

namespace wireup::train::qwen {

std::vector<ParamSpec> qwen3_block_specs(const ModelConfig& m) {
  std::vector<ParamSpec> specs = llama::block_specs(m);
  specs.push_back({"attention.q_norm.weight", {m.head_dim()}});
  specs.push_back({"attention.k_norm.weight", {m.head_dim()}});
  return specs;
}

std::vector<ParamSpec> qwen2_block_specs(const ModelConfig& m) {
  std::vector<ParamSpec> specs = llama::block_specs(m);
  specs.push_back({"attention.bqkv.bias", {m.q_dim() + 2 * m.kv_dim()}});
  return specs;
}

llama::QkvHeads qwen3_qkv(const std::vector<at::Tensor>& p, const at::Tensor& normed,
                          const ModelConfig& m, const llama::Projection& proj) {
  llama::QkvHeads h = llama::llama_qkv(p, normed, m, proj);
  // Over each head's head_dim values, as transformers' Qwen3Attention does.
  h.q = ops::rms_norm(h.q, p[6], m.norm_eps);
  h.k = ops::rms_norm(h.k, p[7], m.norm_eps);
  return h;
}

llama::QkvHeads qwen2_qkv(const std::vector<at::Tensor>& p, const at::Tensor& normed,
                          const ModelConfig& m, const llama::Projection& proj) {
  const auto B = normed.size(0), T = normed.size(1);
  const auto hd = m.head_dim(), kv = m.kv_heads;
  const auto qkv = (proj(normed, p[1]) + p[6]).split_with_sizes({m.q_dim(), kv * hd, kv * hd}, -1);
  return {qkv[0].view({B, T, m.heads, hd}), qkv[1].view({B, T, kv, hd}),
          qkv[2].view({B, T, kv, hd})};
}

}  // namespace wireup::train::qwen
