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

llama::QkvHeads qwen3_qkv(const llama::BlockParams& p, const at::Tensor& normed,
                          const ModelConfig& m, const llama::Projection& proj) {
  llama::QkvHeads h = llama::llama_qkv(p, normed, m, proj);
  // Over each head's head_dim values, as transformers' Qwen3Attention does.
  const at::Tensor &q_norm = p.family(0), &k_norm = p.family(1);  // qwen3_block_specs
  h.q = ops::rms_norm(h.q, q_norm, m.norm_eps);
  h.k = ops::rms_norm(h.k, k_norm, m.norm_eps);
  return h;
}

llama::QkvHeads qwen2_qkv(const llama::BlockParams& p, const at::Tensor& normed,
                          const ModelConfig& m, const llama::Projection& proj) {
  // The Llama's fused QKV projection, plus the fused Q/K/V bias.
  const at::Tensor& bqkv = p.family(0);  // qwen2_block_specs
  const llama::Projection biased = [&proj, &bqkv](const at::Tensor& x, const at::Tensor& w) {
    return proj(x, w) + bqkv;
  };
  return llama::llama_qkv(p, normed, m, biased);
}

}  // namespace wireup::train::qwen
