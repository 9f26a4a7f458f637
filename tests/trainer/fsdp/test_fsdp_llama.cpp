// The FSDP model (flat units, custom autograd, storage release, recompute)
// against a straightforward unsharded Llama written independently here:
// separate Q/K/V and W1/W3 weights, explicit causal softmax attention,
// repeat_interleave for GQA, RoPE on complex pairs spelled out.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <catch2/catch.hpp>
#include <cmath>

#include "comm/comm.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "models/sharded_model.hpp"
#include "optim/sharded_adamw.hpp"

using namespace wireup::train;

namespace {

struct RefBlock {
  at::Tensor attn_norm, wq, wk, wv, wo, ffn_norm, w1, w2, w3;
};

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().requires_grad_(true); }

at::Tensor rmsnorm(const at::Tensor& x, const at::Tensor& w) {
  return x / at::sqrt(x.pow(2).mean(-1, true) + 1e-5) * w;
}

// The reference rotary embedding (autograd-friendly: built with stack), pair
// i at frequency freqs[i].
at::Tensor rope_ad(const at::Tensor& x, const std::vector<double>& freqs) {
  const auto T = x.size(1), d = x.size(3);
  std::vector<at::Tensor> cols;
  for (std::int64_t i = 0; i < d / 2; ++i) {
    const double freq = freqs.at(static_cast<std::size_t>(i));
    at::Tensor ang = at::arange(T, at::kDouble).mul(freq).to(at::kFloat).view({1, T, 1});
    at::Tensor a = x.select(3, 2 * i), b = x.select(3, 2 * i + 1);
    cols.push_back(a * ang.cos() - b * ang.sin());
    cols.push_back(a * ang.sin() + b * ang.cos());
  }
  return at::stack(cols, 3);
}

at::Tensor rope_ad(const at::Tensor& x, double theta) {
  std::vector<double> freqs;
  const auto d = x.size(3);
  for (std::int64_t i = 0; i < d / 2; ++i)
    freqs.push_back(1.0 / std::pow(theta, 2.0 * static_cast<double>(i) / static_cast<double>(d)));
  return rope_ad(x, freqs);
}

struct Reference {
  ModelConfig m;
  at::Tensor emb, norm, out;
  std::vector<RefBlock> blocks;

  // From the FSDP model's unit values (world 1: the shard is the whole unit).
  explicit Reference(ShardedModel& f) : m(f.config()) {
    auto& u = f.units();
    const auto H = m.hidden, kvd = m.kv_dim(), I = m.intermediate;
    emb = leaf(u[0]->master().narrow(0, 0, m.vocab * H).view({m.vocab, H}));
    for (std::int64_t l = 0; l < m.layers; ++l) {
      at::Tensor flat = u[1 + l]->master();
      std::int64_t off = 0;
      auto take = [&](std::vector<std::int64_t> shape) {
        std::int64_t n = 1;
        for (auto s : shape) n *= s;
        at::Tensor t = flat.narrow(0, off, n).view(shape);
        off += n;
        return t;
      };
      RefBlock b;
      b.attn_norm = leaf(take({H}));
      at::Tensor qkv = take({H + 2 * kvd, H});
      b.wq = leaf(qkv.narrow(0, 0, H));
      b.wk = leaf(qkv.narrow(0, H, kvd));
      b.wv = leaf(qkv.narrow(0, H + kvd, kvd));
      b.wo = leaf(take({H, H}));
      b.ffn_norm = leaf(take({H}));
      at::Tensor w13 = take({2 * I, H});
      b.w1 = leaf(w13.narrow(0, 0, I));
      b.w3 = leaf(w13.narrow(0, I, I));
      b.w2 = leaf(take({H, I}));
      blocks.push_back(b);
    }
    at::Tensor h = u.back()->master();
    norm = leaf(h.narrow(0, 0, H));
    // Tied: the same leaf twice, so autograd sums the gradients of both uses.
    out = m.tied ? emb : leaf(h.narrow(0, H, m.vocab * H).view({m.vocab, H}));
  }

  at::Tensor loss(const at::Tensor& tokens) {
    const auto T = tokens.size(1) - 1, B = tokens.size(0);
    const auto nh = m.heads, kv = m.kv_heads, hd = m.head_dim();
    at::Tensor x = emb.index_select(0, tokens.narrow(1, 0, T).reshape({-1})).view({B, T, m.hidden});
    at::Tensor causal = at::ones({T, T}, at::kBool).triu(1);
    // rope_inv_freq: Llama 3.1's scaling, checked against HF's numbers in
    // trainer_config and against the Python HF model in hf_llama3.
    const std::vector<double> freqs = rope_inv_freq(m);
    for (auto& b : blocks) {
      at::Tensor xn = rmsnorm(x, b.attn_norm);
      at::Tensor q = rope_ad(at::matmul(xn, b.wq.t()).view({B, T, nh, hd}), freqs);
      at::Tensor k = rope_ad(at::matmul(xn, b.wk.t()).view({B, T, kv, hd}), freqs);
      at::Tensor v = at::matmul(xn, b.wv.t()).view({B, T, kv, hd});
      k = k.repeat_interleave(nh / kv, 2);
      v = v.repeat_interleave(nh / kv, 2);
      q = q.transpose(1, 2), k = k.transpose(1, 2), v = v.transpose(1, 2);
      at::Tensor s = at::matmul(q, k.transpose(2, 3)) / std::sqrt(static_cast<double>(hd));
      s = s.masked_fill(causal, -INFINITY).softmax(-1);
      at::Tensor a = at::matmul(s, v).transpose(1, 2).reshape({B, T, m.hidden});
      x = x + at::matmul(a, b.wo.t());
      at::Tensor hn = rmsnorm(x, b.ffn_norm);
      at::Tensor g = at::silu(at::matmul(hn, b.w1.t())) * at::matmul(hn, b.w3.t());
      x = x + at::matmul(g, b.w2.t());
    }
    at::Tensor logits = at::matmul(rmsnorm(x, norm), out.t());
    at::Tensor logp = logits.log_softmax(-1).view({B * T, m.vocab});
    return -logp.gather(1, tokens.narrow(1, 1, T).reshape({-1, 1})).mean();
  }
};

CommGroups solo() {
  auto c = make_solo_comm();
  return {c, c, c};
}

}  // namespace

TEST_CASE("the reference rope rotates pair i at position t by t * theta^(-2i/d)") {
  // Against values computed here in double, element by element: x = 1 + 0j in
  // every pair, so the output pair is (cos a, sin a) with a = t * freq_i.
  const std::int64_t T = 7, d = 8;
  const double theta = 10000.0;
  at::Tensor x = at::zeros({1, T, 1, d});
  for (std::int64_t i = 0; i < d / 2; ++i) x.select(3, 2 * i).fill_(1.0);
  const at::Tensor out = rope_ad(x, theta);
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t i = 0; i < d / 2; ++i) {
      const double a = static_cast<double>(t) * std::pow(theta, -2.0 * i / static_cast<double>(d));
      CHECK(out[0][t][0][2 * i].item<float>() == Approx(std::cos(a)).margin(1e-6));
      CHECK(out[0][t][0][2 * i + 1].item<float>() == Approx(std::sin(a)).margin(1e-6));
    }
  // A rotation keeps each pair's length, for any input.
  at::Tensor r = at::randn({2, T, 3, d});
  const at::Tensor rr = rope_ad(r, theta);
  auto pair_norms = [](const at::Tensor& v) { return v.view({2, T, 3, d / 2, 2}).pow(2).sum(-1); };
  CHECK(at::allclose(pair_norms(rr), pair_norms(r), 1e-5, 1e-5));
}

TEST_CASE("FSDP forward and backward match an unsharded Llama") {
  ModelConfig m = preset("micro");  // GQA: 4 heads, 2 KV heads
  const bool checkpointing = GENERATE(false, true);
  ModelOptions o;
  o.fsdp.activation_checkpointing = checkpointing;
  ShardedModel f(m, solo(), o, 7);
  Reference ref(f);

  auto gen = at::detail::createCPUGenerator(3);
  at::Tensor tokens = at::randint(m.vocab, {3, m.context + 1}, gen, at::kLong);
  at::Tensor ref_loss = ref.loss(tokens);
  ref_loss.backward();
  const double loss = f.step(tokens, true, 1.0);
  INFO("checkpointing " << checkpointing);
  CHECK(loss == Approx(ref_loss.item<double>()).epsilon(1e-5));

  auto& u = f.units();
  const auto H = m.hidden, kvd = m.kv_dim(), I = m.intermediate;
  auto close = [](const at::Tensor& a, const at::Tensor& b) {
    return at::allclose(a, b, 1e-4, 1e-6);
  };
  CHECK(close(u[0]->grad().narrow(0, 0, m.vocab * H), ref.emb.grad().reshape({-1})));
  for (std::int64_t l = 0; l < m.layers; ++l) {
    at::Tensor g = u[1 + l]->grad();
    const auto& b = ref.blocks[static_cast<std::size_t>(l)];
    std::int64_t off = 0;
    auto next = [&](std::int64_t n) {
      at::Tensor t = g.narrow(0, off, n);
      off += n;
      return t;
    };
    CHECK(close(next(H), b.attn_norm.grad()));
    CHECK(close(next(H * H), b.wq.grad().reshape({-1})));
    CHECK(close(next(kvd * H), b.wk.grad().reshape({-1})));
    CHECK(close(next(kvd * H), b.wv.grad().reshape({-1})));
    CHECK(close(next(H * H), b.wo.grad().reshape({-1})));
    CHECK(close(next(H), b.ffn_norm.grad()));
    CHECK(close(next(I * H), b.w1.grad().reshape({-1})));
    CHECK(close(next(I * H), b.w3.grad().reshape({-1})));
    CHECK(close(next(H * I), b.w2.grad().reshape({-1})));
  }
  at::Tensor gh = u.back()->grad();
  CHECK(close(gh.narrow(0, 0, H), ref.norm.grad()));
  CHECK(close(gh.narrow(0, H, m.vocab * H), ref.out.grad().reshape({-1})));
}

TEST_CASE("tied embeddings: one matrix, its gradient the sum of the lookup's and the output's") {
  ModelConfig m = preset("micro");
  m.tied = true;
  m.rope_scaling = parse_rope_scaling("llama3:4,1,4,100");  // kept, blended, divided pairs
  const bool checkpointing = GENERATE(false, true);
  ModelOptions o;
  o.fsdp.activation_checkpointing = checkpointing;
  ShardedModel f(m, solo(), o, 11);
  REQUIRE(f.units().back()->numel() == m.hidden);  // the head holds the final norm only
  Reference ref(f);
  auto gen = at::detail::createCPUGenerator(4);
  at::Tensor tokens = at::randint(m.vocab, {3, m.context + 1}, gen, at::kLong);
  at::Tensor ref_loss = ref.loss(tokens);
  ref_loss.backward();
  INFO("checkpointing " << checkpointing);
  CHECK(f.step(tokens, true, 1.0) == Approx(ref_loss.item<double>()).epsilon(1e-5));
  const at::Tensor g = f.units()[0]->grad().narrow(0, 0, m.vocab * m.hidden);
  CHECK(at::allclose(g, ref.emb.grad().reshape({-1}), 1e-4, 1e-6));
  CHECK(at::allclose(f.units().back()->grad().narrow(0, 0, m.hidden), ref.norm.grad(), 1e-4, 1e-6));
  // A token that is never an input: the lookup gives its row nothing, the
  // output projection does.
  const at::Tensor inputs = tokens.narrow(1, 0, m.context);
  std::int64_t unused = 0;
  while (inputs.eq(unused).any().item<bool>()) ++unused;
  REQUIRE(unused < m.vocab);
  CHECK(g.view({m.vocab, m.hidden})[unused].abs().max().item<float>() > 0.0f);
  for (auto& u : f.units()) CHECK_FALSE(u->gathered());
  CHECK(f.step(tokens, false, 0.0) == Approx(ref_loss.item<double>()).epsilon(1e-5));
}

TEST_CASE("units hold no full parameters between steps") {
  ShardedModel f(preset("micro"), solo(), {}, 1);
  at::Tensor tokens = at::randint(64, {2, 17}, at::kLong);
  f.step(tokens, true, 1.0);
  for (auto& u : f.units()) {
    INFO(u->name());
    CHECK_FALSE(u->gathered());
  }
  CHECK(f.step(tokens, false, 0.0) > 0);
}

TEST_CASE("a lone rank's gradients: accumulated in grad(), read mid-way or not, stepped") {
  // One rank in fp32 adds autograd's gradients straight into grad()'s views.
  // Whether grad() is read between micro-steps or not, the norm and the
  // optimizer's update are the same, and the step leaves grad() zero.
  const ModelConfig m = preset("micro");
  at::Tensor a = at::randint(m.vocab, {2, 17}, at::kLong);
  at::Tensor b = at::randint(m.vocab, {2, 17}, at::kLong);
  ShardedModel plain(m, solo(), {}, 5), read(m, solo(), {}, 5);
  plain.step(a, true, 1.0);
  read.step(a, true, 1.0);
  for (auto& u : read.units()) CHECK(u->grad().abs().max().item<float>() > 0.0f);  // read mid-way
  plain.step(b, true, 1.0);
  read.step(b, true, 1.0);  // adds to the first micro-step's gradients
  std::vector<FlatUnit*> pu, ru;
  for (std::size_t i = 0; i < plain.units().size(); ++i) {
    pu.push_back(plain.units()[i].get());
    ru.push_back(read.units()[i].get());
  }
  auto solo_comm = solo().shard;
  const double pn = global_grad_norm(pu, *solo_comm), rn = global_grad_norm(ru, *solo_comm);
  CHECK(pn == Approx(rn).epsilon(1e-6));
  // The sum of both micro-steps: a model stepped on a alone has smaller ones.
  ShardedModel once(m, solo(), {}, 5);
  once.step(a, true, 1.0);
  std::vector<FlatUnit*> ou;
  for (auto& u : once.units()) ou.push_back(u.get());
  CHECK(global_grad_norm(ou, *solo_comm) != Approx(pn).epsilon(1e-3));
  ShardedAdamW po(pu, AdamWConfig{}), ro(ru, AdamWConfig{});
  po.step(1e-3, 0.5);
  ro.step(1e-3, 0.5);
  for (std::size_t i = 0; i < pu.size(); ++i) {
    INFO(pu[i]->name());
    CHECK(at::allclose(pu[i]->master(), ru[i]->master(), 1e-6, 1e-7));
    CHECK(pu[i]->grad().abs().max().item<float>() == 0.0f);  // consumed on both sides
    CHECK(ru[i]->grad().abs().max().item<float>() == 0.0f);
  }
}

TEST_CASE("a token id outside the vocabulary is an error, not a read out of bounds") {
  ShardedModel f(preset("micro"), solo(), {}, 1);
  const auto V = f.config().vocab;
  at::Tensor tokens = at::randint(V, {1, 9}, at::kLong);
  tokens[0][8] = V;  // the last token is a target only, never an input
  CHECK_THROWS_WITH(f.step(tokens, true, 1.0), Catch::Contains("outside the vocabulary"));
}

TEST_CASE("blocked grouped-query attention matches plain causal softmax attention") {
  for (std::int64_t T : {16, 200, 256}) {  // one block; six uneven blocks; eight blocks
    INFO("T=" << T);
    const std::int64_t B = 2, nh = 6, kv = 2, hd = 8;
    at::Tensor q = at::randn({B, T, nh, hd}).requires_grad_(true);
    at::Tensor k = at::randn({B, T, kv, hd}).requires_grad_(true);
    at::Tensor v = at::randn({B, T, kv, hd}).requires_grad_(true);
    at::Tensor causal = at::full({T, T}, -INFINITY).triu_(1);
    at::Tensor out = ops::causal_attention(q, k, v, causal);
    at::Tensor w = at::randn(out.sizes());
    auto got = torch::autograd::grad({(out * w).sum()}, {q, k, v});
    // Reference: every query head against its KV head, full scores, mask after.
    at::Tensor qh = q.transpose(1, 2);
    at::Tensor kh = k.transpose(1, 2).repeat_interleave(nh / kv, 1);
    at::Tensor vh = v.transpose(1, 2).repeat_interleave(nh / kv, 1);
    at::Tensor s = at::matmul(qh, kh.transpose(-1, -2)) / std::sqrt(double(hd));
    s = s.masked_fill(at::ones({T, T}, at::kBool).triu(1), -INFINITY);
    at::Tensor ref = at::matmul(s.softmax(-1), vh).transpose(1, 2).reshape({B, T, nh * hd});
    auto want = torch::autograd::grad({(ref * w).sum()}, {q, k, v});
    CHECK(at::allclose(out, ref, 1e-5, 1e-5));
    for (int i = 0; i < 3; ++i) CHECK(at::allclose(got[i], want[i], 1e-4, 1e-5));
  }
}
