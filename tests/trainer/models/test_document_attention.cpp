// Document masking in the Llama blocks (model/attention.cpp, llama_model.cpp):
// a packed row of conversations computes, for each conversation, what that
// conversation computes alone (positions from 0, causal), values and
// gradients, in fp64 through the blocked attention with several blocks; in
// fp32 (the CPU kernels), changing one conversation's tokens leaves every
// other conversation's logits bit-identical; the masked head loss is the
// sum of the trained targets' cross-entropy over the divisor; on the CPU
// document masking takes the blocked attention (WIREUP_DOCUMENT_ATTENTION
// checked), and a packed batch carries its varlen offsets.
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/autograd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "batch/batch_tokens.hpp"
#include "batch/document_layout.hpp"
#include "models/llama/llama_model.hpp"
#include "models/model_config.hpp"
#include "ops/fused_ops.hpp"

using namespace wireup::train;

namespace {

ModelConfig tiny() {
  ModelConfig m;
  m.context = 128;
  m.vocab = 97;
  m.hidden = 64;
  m.layers = 2;
  m.heads = 4;
  m.kv_heads = 2;
  m.intermediate = 96;
  m.rope_scaling = parse_rope_scaling("llama3:8,1,4,32");
  return m;
}

// A unit's parameters as leaf tensors of `dtype`, cut from init_unit's values.
std::vector<at::Tensor> params(const std::vector<ParamSpec>& specs, const ModelConfig& m,
                               std::uint64_t seed, at::ScalarType dtype) {
  const at::Tensor flat = llama::init_unit(specs, m, seed).to(dtype);
  std::vector<at::Tensor> out;
  std::int64_t off = 0;
  for (const auto& s : specs) {
    // norms away from 1, so that a mix-up between them would show
    at::Tensor p = flat.narrow(0, off, s.numel()).view(s.shape).clone();
    if (s.shape.size() == 1) p.add_(at::arange(s.numel(), dtype).mul_(0.01));
    out.push_back(p.requires_grad_(true));
    off += s.numel();
  }
  return out;
}

// Three conversations of 37, 41 and 22 tokens (T = 100: the blocked
// attention's three blocks of 33/33/34 tokens, boundaries inside conversations).
const std::vector<std::int64_t> kStarts = {0, 37, 78, 100};

at::Tensor segments_row() {
  at::Tensor s = at::empty({1, 100}, at::kInt);
  for (int c = 0; c < 3; ++c) s.narrow(1, kStarts[c], kStarts[c + 1] - kStarts[c]).fill_(c);
  return s;
}

llama::Documents documents(const at::Tensor& segments, at::ScalarType dtype) {
  // positions through the plain-C++ rule, from a row of T+1 segments
  at::Tensor wide = at::cat({segments, segments.narrow(1, 99, 1)}, 1).contiguous();
  const auto pos = positions_from_segments(wide.data_ptr<std::int32_t>(), 1, 101);
  at::Tensor positions = at::tensor(pos, at::kLong).view({1, 100});
  return llama::make_documents(positions, segments, dtype);
}

struct Stack {
  ModelConfig m = tiny();
  std::vector<at::Tensor> emb, head;
  std::vector<std::vector<at::Tensor>> blocks;
  ops::Rope rope = llama::make_rope(m, m.context);

  explicit Stack(at::ScalarType dtype) {
    emb = params(llama::embedding_specs(m), m, 1, dtype);
    for (int l = 0; l < 2; ++l) blocks.push_back(params(llama::block_specs(m), m, 2 + l, dtype));
    head = params(llama::head_specs(m), m, 9, dtype);
  }
  at::Tensor hidden(const at::Tensor& tokens, const llama::Documents& docs) {
    at::Tensor x = llama::embed(emb, tokens);
    for (const auto& p : blocks) x = llama::block(p, x, rope, m, Float8Recipe::Off, docs);
    return x;
  }
  at::Tensor logits(const at::Tensor& tokens, const llama::Documents& docs) {
    return ops::linear(ops::rms_norm(hidden(tokens, docs), head[0], m.norm_eps), head[1]);
  }
  std::vector<at::Tensor> leaves() {
    std::vector<at::Tensor> all = emb;
    for (const auto& p : blocks) all.insert(all.end(), p.begin(), p.end());
    all.insert(all.end(), head.begin(), head.end());
    return all;
  }
};

// Within fp32 rounding of a few steps, relative to the tensor's size: rms_norm
// computes in fp32 even for fp64 inputs, so rows equal up to the last bits of
// the attention's sums may round apart there. A wrong mask or position is off
// by far more (the last CHECK of the first test).
bool close(const at::Tensor& a, const at::Tensor& b) {
  const double scale = b.abs().max().item<double>();
  return at::allclose(a, b, 1e-5, 1e-5 * scale);
}

}  // namespace

TEST_CASE("document masking: a packed row computes each conversation as if alone (fp64)") {
  Stack s(at::kDouble);
  auto gen = at::detail::createCPUGenerator(5);
  const at::Tensor tokens = at::randint(97, {1, 100}, gen, at::kLong);
  const at::Tensor weights = at::randn({1, 100, 97}, gen, at::kDouble);
  // packed: one row, document masking
  const at::Tensor packed = s.logits(tokens, documents(segments_row(), at::kDouble));
  (packed * weights).sum().backward();
  std::vector<at::Tensor> packed_grads;
  for (auto& p : s.leaves()) packed_grads.push_back(p.grad().clone()), p.mutable_grad().reset();
  // alone: each conversation its own row, plain causal attention from position 0
  at::Tensor loss_alone = at::zeros({}, at::kDouble);
  for (int c = 0; c < 3; ++c) {
    const auto a = kStarts[c], n = kStarts[c + 1] - a;
    const at::Tensor alone = s.logits(tokens.narrow(1, a, n), llama::Documents());
    CHECK(close(packed.narrow(1, a, n), alone));
    loss_alone = loss_alone + (alone * weights.narrow(1, a, n)).sum();
  }
  loss_alone.backward();
  const auto leaves = s.leaves();
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    INFO("parameter " << i);
    CHECK(close(packed_grads[i], leaves[i].grad()));
  }
  // and without document masking the first conversation matches, the later ones do not
  const at::Tensor across = s.logits(tokens, llama::Documents());
  CHECK(close(across.narrow(1, 0, 37), packed.narrow(1, 0, 37)));
  CHECK_FALSE(close(across.narrow(1, 37, 63), packed.narrow(1, 37, 63)));
}

TEST_CASE("document masking: changing one conversation leaves the others' logits bit-identical") {
  Stack s(at::kFloat);
  c10::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(6);
  const at::Tensor a = at::randint(97, {2, 100}, gen, at::kLong);
  at::Tensor b = a.clone();
  b[0].narrow(0, 37, 41).copy_(at::randint(97, {41}, gen, at::kLong));  // conversation 1, row 0
  const at::Tensor seg = at::cat({segments_row(), segments_row()}, 0);
  const auto docs = documents(seg.narrow(0, 0, 1), at::kFloat);
  llama::Documents both = docs;
  both.positions = at::cat({docs.positions, docs.positions}, 0);
  both.attend = ops::document_mask(seg, at::kFloat);
  const at::Tensor la = s.logits(a, both), lb = s.logits(b, both);
  CHECK(at::equal(la[0].narrow(0, 0, 37), lb[0].narrow(0, 0, 37)));
  CHECK(at::equal(la[0].narrow(0, 78, 22), lb[0].narrow(0, 78, 22)));
  CHECK(at::equal(la[1], lb[1]));
  CHECK_FALSE(at::equal(la[0].narrow(0, 37, 41), lb[0].narrow(0, 37, 41)));
}

TEST_CASE("document_mask follows may_attend") {
  at::Tensor seg = segments_row();
  const at::Tensor mask = ops::document_mask(seg, at::kFloat).mask;
  REQUIRE(mask.sizes() == at::IntArrayRef({1, 100, 100}));
  const std::int32_t* row = seg.data_ptr<std::int32_t>();
  const float* m = mask.data_ptr<float>();
  int wrong = 0;
  for (int q = 0; q < 100; ++q)
    for (int k = 0; k < 100; ++k)
      wrong += (m[q * 100 + k] == 0.0f) != may_attend(row, q, k) ||
               (m[q * 100 + k] != 0.0f && !std::isinf(m[q * 100 + k]));
  CHECK(wrong == 0);
}

TEST_CASE("masked head loss: trained targets' cross-entropy summed over the divisor") {
  const ModelConfig m = tiny();
  auto p = params(llama::head_specs(m), m, 3, at::kDouble);
  auto gen = at::detail::createCPUGenerator(8);
  const at::Tensor x = at::randn({2, 10, 64}, gen, at::kDouble).requires_grad_(true);
  const at::Tensor targets = at::randint(97, {2, 10}, gen, at::kLong);
  const at::Tensor trained = at::tensor(std::vector<std::int64_t>{1, 2, 7, 12, 19}, at::kLong);
  const at::Tensor loss = llama::head_loss(p, x, targets, m, trained, 8.0);
  const at::Tensor logits = ops::linear(ops::rms_norm(x, p[0], m.norm_eps), p[1]).reshape({-1, 97});
  const at::Tensor ce = -at::log_softmax(logits, -1).gather(1, targets.reshape({-1, 1})).squeeze(1);
  const at::Tensor want = ce.index_select(0, trained).sum() / 8.0;
  // the head's cross-entropy runs in fp32: agreement to its rounding
  CHECK(loss.item<double>() == Approx(want.item<double>()).epsilon(1e-6));
  const auto g = torch::autograd::grad({loss}, {x, p[1]});
  const auto w = torch::autograd::grad({want}, {x, p[1]});
  CHECK(close(g[0], w[0]));
  CHECK(close(g[1], w[1]));
  // no trained target: zero, with zero (defined) gradients for everything
  const at::Tensor none = llama::head_loss(p, x, targets, m, at::empty({0}, at::kLong), 1.0);
  CHECK(none.item<double>() == 0.0);
  const auto gz = torch::autograd::grad({none}, {x, p[0], p[1]});
  for (const auto& t : gz) CHECK(t.abs().max().item<double>() == 0.0);
}

TEST_CASE("document masking on the CPU: the blocked attention, the test knob checked") {
  ::unsetenv("WIREUP_DOCUMENT_ATTENTION");
  auto c = ops::document_attention_for(at::kCPU, at::kBFloat16, 64);
  CHECK(c.path == DocumentAttention::Blocked);
  CHECK(c.note.empty());
  ::setenv("WIREUP_DOCUMENT_ATTENTION", "mask", 1);
  CHECK(ops::document_attention_for(at::kCPU, at::kFloat, 64).path == DocumentAttention::Blocked);
  ::setenv("WIREUP_DOCUMENT_ATTENTION", "flash", 1);
  CHECK_THROWS_AS(ops::document_attention_for(at::kCPU, at::kFloat, 64), std::invalid_argument);
  ::unsetenv("WIREUP_DOCUMENT_ATTENTION");
}

TEST_CASE("a packed batch carries its varlen offsets and longest conversation") {
  wireup::data::Batch b;
  b.rows = 2;
  b.cols = 6;  // T = 5
  b.segments = {0, 0, 1, 1, 1, 2, 0, 0, 0, 0, 1, 1};
  b.loss_mask = std::vector<std::uint8_t>(12, 1);
  ModelBatch mb;
  add_document_layout(mb, b, true);
  REQUIRE(mb.cu_seqlens.scalar_type() == at::kInt);
  const std::vector<std::int32_t> cu(
      mb.cu_seqlens.data_ptr<std::int32_t>(),
      mb.cu_seqlens.data_ptr<std::int32_t>() + mb.cu_seqlens.numel());
  CHECK(cu == std::vector<std::int32_t>{0, 2, 5, 9, 10});  // inputs: 0 0 1 1 1 | 0 0 0 0 1
  CHECK(mb.max_seqlen == 4);
  ModelBatch off;
  add_document_layout(off, b, false);
  CHECK_FALSE(off.cu_seqlens.defined());
}
