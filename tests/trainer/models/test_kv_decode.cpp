// The KV-cache decoder against the model's full recomputation (the training
// forward of llama_model.hpp: embed, block, final norm, output projection):
// the same logits at every position, to 1e-5, whether the sequence is fed
// whole, in chunks or one token at a time; GQA, tied and rope-scaled shapes.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <catch2/catch.hpp>

#include "models/family_registry.hpp"
#include "models/llama/kv_decode.hpp"
#include "models/llama/llama_model.hpp"
#include "models/model_config.hpp"
#include "ops/fused_ops.hpp"

using namespace wireup::train;

namespace {

// Random parameters of a unit's specs; Q and K large, so attention is sharp
// and a position off by one changes the logits.
std::vector<at::Tensor> random_params(const std::vector<ParamSpec>& specs, double scale) {
  std::vector<at::Tensor> out;
  for (const auto& s : specs) {
    const bool norm = s.shape.size() == 1;
    out.push_back(norm ? 1 + 0.1 * at::randn(s.shape) : scale * at::randn(s.shape));
  }
  return out;
}

llama::DecoderWeights random_weights(const ModelConfig& m, at::ScalarType dtype = at::kFloat) {
  llama::DecoderWeights w;
  w.embedding = random_params(llama::embedding_specs(m), 1.0)[0].to(dtype);
  for (std::int64_t l = 0; l < m.layers; ++l) {
    auto p = random_params(llama::block_specs(m), 0.15);
    p[1] = 0.4 * at::randn(p[1].sizes());  // fused QKV
    for (auto& t : p) t = t.to(dtype);
    w.blocks.push_back(p);
  }
  const auto head = random_params(llama::head_specs(m), 0.2);
  w.norm = head[0].to(dtype);
  w.output = m.tied ? w.embedding : head[1].to(dtype);
  return w;
}

// Every position's logits by the training forward, no cache.
at::Tensor full_logits(const ModelConfig& m, const llama::DecoderWeights& w,
                       const at::Tensor& tokens) {
  c10::AutoGradMode no_grad(false);
  const auto T = tokens.size(0);
  const ops::Rope rope = llama::make_rope(m, T);
  at::Tensor x = llama::embed({w.embedding}, tokens.unsqueeze(0));
  for (const auto& p : w.blocks) x = llama::block(p, x, rope, m);
  return ops::linear(ops::rms_norm(x[0], w.norm, m.norm_eps), w.output);
}

double max_rel_error(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>() / b.abs().max().item<double>();
}

ModelConfig tiny(bool tied, bool scaled) {
  ModelConfig m = preset("tiny");  // 64 context, 512 vocab, hidden 64, 4 heads, 2 KV heads
  m.tied = tied;
  if (scaled) {
    m.rope_theta = 500000;
    m.rope_scaling = parse_rope_scaling("llama3:8,1,4,16");
  }
  return m;
}

}  // namespace

TEST_CASE("KV cache: the logits of full recomputation at every position", "[kv_decode]") {
  // fp32 (the plain-C++ kernels, oneDNN) to 1e-5 of the largest logit; double
  // (ATen; its rms_norm rounds to fp32 inside: seen ~4e-8) to 1e-6.
  for (const auto& [dtype, tol] : {std::pair{at::kFloat, 1e-5}, std::pair{at::kDouble, 1e-6}}) {
    for (const bool tied : {false, true}) {
      for (const bool scaled : {false, true}) {
        const ModelConfig m = tiny(tied, scaled);
        at::manual_seed(11);
        const auto w = random_weights(m, dtype);
        const at::Tensor tokens = at::randint(m.vocab, {40}, at::kLong);
        const at::Tensor want = full_logits(m, w, tokens);
        llama::KvDecoder dec(m, w, 40);
        // A prompt of 13 in one feed, then chunks of 1, 5 and 1 until the end.
        std::vector<at::Tensor> rows{dec.feed(tokens.narrow(0, 0, 13), true)};
        for (std::int64_t at = 13; at < 40;) {
          const std::int64_t n = std::min<std::int64_t>(at % 3 == 0 ? 5 : 1, 40 - at);
          rows.push_back(dec.feed(tokens.narrow(0, at, n), true));
          at += n;
        }
        const at::Tensor got = at::cat(rows);
        INFO("tied " << tied << " rope-scaled " << scaled << " dtype " << dtype);
        CHECK(dec.position() == 40);
        CHECK(max_rel_error(got, want) < tol);
        // The default: only the last position's row.
        dec.reset();
        const at::Tensor last = dec.feed(tokens);
        CHECK(last.dim() == 1);
        CHECK(max_rel_error(last, want[39]) < tol);
        // Sensitive: another prefix in the cache (every later position one off) changes them.
        dec.reset();
        dec.feed(tokens.narrow(0, 0, 1));
        const at::Tensor shifted = dec.feed(tokens.narrow(0, 0, 39));
        CHECK(max_rel_error(shifted, want[38]) > 1e-2);
      }
    }
  }
}

TEST_CASE("KV cache: capacity and shapes refused", "[kv_decode]") {
  const ModelConfig m = tiny(false, false);
  at::manual_seed(3);
  const auto w = random_weights(m);
  CHECK_THROWS(llama::KvDecoder(m, w, m.context + 1));
  CHECK_THROWS(llama::KvDecoder(m, w, 0));
  llama::KvDecoder dec(m, w, 8);
  dec.feed(at::zeros({6}, at::kLong));
  CHECK_THROWS(dec.feed(at::zeros({3}, at::kLong)));  // past the capacity
  CHECK(dec.position() == 6);
  dec.feed(at::zeros({2}, at::kLong));
  CHECK(dec.position() == 8);
}
