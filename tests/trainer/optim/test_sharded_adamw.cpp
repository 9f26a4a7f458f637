// ShardedAdamW on a flat unit of one rank against AdamW written out plainly
// for a few steps: the update, clipping through grad_scale, the step count,
// the gradient consumed.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "comm/comm.hpp"
#include "fsdp/flat_unit.hpp"
#include "optim/sharded_adamw.hpp"

using namespace wireup::train;

TEST_CASE("ShardedAdamW follows the AdamW formula on a unit's shard") {
  const CommGroups solo = make_solo_groups();
  FlatUnit unit("u", {ParamSpec{"w", {5, 3}}, ParamSpec{"b", {7}}}, solo.shard, solo.replicate,
                at::kFloat);
  const std::int64_t n = unit.numel();
  REQUIRE(unit.shard_numel() == n);  // a group of one: no padding
  at::Tensor start = at::linspace(-1.0, 1.0, n, at::kFloat);
  unit.load_full(start);
  const AdamWConfig c{0.9, 0.95, 1e-8, 0.1};
  ShardedAdamW opt({&unit}, c);
  std::vector<double> p(static_cast<std::size_t>(n)), m(p.size(), 0.0), v(p.size(), 0.0);
  for (std::int64_t i = 0; i < n; ++i) p[static_cast<std::size_t>(i)] = start[i].item<float>();
  const double lr = 1e-2, clip = 0.25;
  for (int t = 1; t <= 3; ++t) {
    at::Tensor g = at::cos(at::arange(n, at::kFloat) * static_cast<float>(t));
    unit.grad().copy_(g);
    opt.step(lr, clip);
    const double bc1 = 1 - std::pow(c.beta1, t), bc2 = 1 - std::pow(c.beta2, t);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(i);
      const double gs = static_cast<double>(g[i].item<float>()) * clip;
      m[k] = c.beta1 * m[k] + (1 - c.beta1) * gs;
      v[k] = c.beta2 * v[k] + (1 - c.beta2) * gs * gs;
      p[k] = p[k] * (1 - lr * c.weight_decay) -
             lr / bc1 * m[k] / (std::sqrt(v[k]) / std::sqrt(bc2) + c.eps);
      INFO("step " << t << " element " << i);
      CHECK(unit.master()[i].item<float>() == Approx(p[k]).epsilon(1e-5).margin(1e-6));
      CHECK(opt.exp_avg()[0][i].item<float>() == Approx(m[k]).epsilon(1e-5).margin(1e-7));
      CHECK(opt.exp_avg_sq()[0][i].item<float>() == Approx(v[k]).epsilon(1e-5).margin(1e-9));
    }
    CHECK(opt.steps() == t);
    CHECK(unit.grad().abs().max().item<float>() == 0.0f);  // consumed
  }
}
