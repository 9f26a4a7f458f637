// LoRA on FSDP units (lora/lora_units.hpp): the plan that freezes a family's
// units and adds a held unit of adapters per layer, PEFT's initial values,
// and the adapters' part of each fused projection against the formula.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>

#include "lora/lora_units.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "models/model_registry.hpp"

using namespace wireup::train;
using lora::FusedProjection;
using lora::Target;

namespace {

lora::LoraConfig config(std::vector<Target> targets, double dropout = 0) {
  lora::LoraConfig c;
  c.rank = 4;
  c.alpha = 8;
  c.dropout = dropout;
  c.targets = std::move(targets);
  return c;
}

}  // namespace

TEST_CASE("with_adapters freezes the family's units and adds one held unit per layer") {
  ModelConfig m = preset("qwen3-tiny");
  m.tied = true;
  const auto base = model_spec(m).units(m);
  const auto c = config({Target::Q, Target::V, Target::Down});
  const auto plan = lora::with_adapters(base, m, c);
  REQUIRE(plan.size() == base.size() + static_cast<std::size_t>(m.layers));
  for (std::size_t i = 0; i < base.size(); ++i) {
    CHECK_FALSE(plan[i].trainable);
    CHECK(plan[i].runs);
    CHECK(plan[i].specs.size() == base[i].specs.size());
  }
  CHECK(plan[base.size() - 1].borrows == 0);  // the tied head still borrows the embedding
  for (std::int64_t l = 0; l < m.layers; ++l) {
    const auto& block = plan[static_cast<std::size_t>(l) + 1];
    const auto& held = plan[base.size() + static_cast<std::size_t>(l)];
    CHECK(block.borrows == static_cast<int>(base.size() + static_cast<std::size_t>(l)));
    CHECK(held.name == "lora" + std::to_string(l));
    CHECK(held.trainable);
    CHECK_FALSE(held.runs);
    REQUIRE(held.specs.size() == 6);
    CHECK(held.specs[0].name == "q_proj.lora_A");
    CHECK(held.specs[0].shape == std::vector<std::int64_t>{4, m.hidden});
    CHECK(held.specs[1].shape == std::vector<std::int64_t>{m.q_dim(), 4});
    CHECK(held.specs[3].shape == std::vector<std::int64_t>{m.kv_dim(), 4});
    CHECK(held.specs[4].shape == std::vector<std::int64_t>{4, m.intermediate});
    CHECK(held.specs[5].name == "down_proj.lora_B");
  }
}

TEST_CASE("adapters start as PEFT's: A kaiming-uniform, B zero, the same for a seed") {
  const ModelConfig m = preset("tiny");
  const auto plan = lora::with_adapters(model_spec(m).units(m), m, config({Target::O, Target::Up}));
  const UnitPlan& held = plan.back();
  const at::Tensor v = lora::init_adapters(held, 7);
  CHECK(at::equal(v, lora::init_adapters(held, 7)));
  CHECK_FALSE(at::equal(v, lora::init_adapters(held, 8)));
  std::int64_t off = 0;
  for (const auto& s : held.specs) {
    const at::Tensor t = v.narrow(0, off, s.numel());
    off += s.numel();
    if (s.name.find("lora_B") != std::string::npos) {
      CHECK(t.abs().max().item<float>() == 0.0f);
    } else {
      const double bound = 1.0 / std::sqrt(static_cast<double>(s.shape[1]));
      CHECK(t.abs().max().item<double>() <= bound);
      CHECK(t.abs().max().item<double>() > 0.8 * bound);  // spread over the range
    }
  }
}

TEST_CASE("an adapted projection adds scale * B A x to its targets' rows, zeros elsewhere") {
  const ModelConfig m = preset("tiny");
  const auto c = config({Target::Q, Target::V});
  std::vector<at::Tensor> ab;
  for (const auto& s : lora::adapter_specs(m, c)) ab.push_back(at::randn(s.shape));
  const lora::BlockAdapters adapters(c, m, ab, 0);
  const at::Tensor x = at::randn({2, 3, m.hidden});
  const at::Tensor d = adapters.delta(FusedProjection::Qkv, x);
  REQUIRE(d.sizes() == at::IntArrayRef({2, 3, m.q_dim() + 2 * m.kv_dim()}));
  const at::Tensor q = at::matmul(at::matmul(x, ab[0].t()), ab[1].t()) * c.scale();
  const at::Tensor v = at::matmul(at::matmul(x, ab[2].t()), ab[3].t()) * c.scale();
  // fp32 sums in another order (the CPU's kernels choose it): an absolute
  // tolerance relative to the largest value, ~100 here
  const auto close = [](const at::Tensor& got, const at::Tensor& want) {
    return at::allclose(got, want, 1e-5, 1e-5 * want.abs().max().item<double>());
  };
  CHECK(close(d.narrow(-1, 0, m.q_dim()), q));
  CHECK(d.narrow(-1, m.q_dim(), m.kv_dim()).abs().max().item<float>() == 0.0f);  // k: none
  CHECK(close(d.narrow(-1, m.q_dim() + m.kv_dim(), m.kv_dim()), v));
  CHECK_FALSE(adapters.delta(FusedProjection::GateUp, x).defined());  // no target there
}

TEST_CASE("LoRA dropout: a fixed mask per seed, the kept inputs scaled by 1 / (1 - p)") {
  const ModelConfig m = preset("tiny");
  const auto c = config({Target::O}, 0.25);
  std::vector<at::Tensor> ab;
  for (const auto& s : lora::adapter_specs(m, c)) ab.push_back(at::randn(s.shape));
  // A one-hot B row and an identity-like A read the dropped input back.
  ab[0] = at::zeros({4, m.q_dim()});
  ab[0][0][0] = 1;
  ab[1] = at::zeros({m.hidden, 4});
  ab[1][0][0] = 1;
  const at::Tensor x = at::ones({1, 4096, m.q_dim()});
  const auto col = [&](std::uint64_t seed) {
    return lora::BlockAdapters(c, m, ab, seed).delta(FusedProjection::Out, x).select(-1, 0) /
           c.scale();
  };
  const at::Tensor a = col(11), b = col(11), other = col(12), off = col(0);
  CHECK(at::equal(a, b));
  CHECK_FALSE(at::equal(a, other));
  CHECK(off.min().item<float>() == 1.0f);  // seed 0: no dropout (evaluation)
  const double kept = (a > 0).to(at::kDouble).mean().item<double>();
  CHECK(kept == Approx(0.75).margin(0.03));
  CHECK(a.max().item<float>() == Approx(1.0 / 0.75));
}
