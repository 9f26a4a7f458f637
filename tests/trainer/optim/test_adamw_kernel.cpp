// The optimizer's fused CPU pass (adamw_kernel) against AdamW written out
// plainly: in double precision term by term, and as torch.optim.AdamW's
// single-tensor update in ATen ops.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <vector>

#include "optim/adamw_kernel.hpp"

using namespace wireup::train;

TEST_CASE("the fused AdamW pass follows the AdamW formula step by step") {
  const std::size_t n = 37;  // not a multiple of any vector width
  std::vector<float> p(n), g(n), m(n, 0.0f), v(n, 0.0f);
  std::vector<double> rp(n), rm(n, 0.0), rv(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) rp[i] = p[i] = 0.05f * static_cast<float>(i) - 0.8f;
  const double lr = 1e-2, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1, scale = 0.5;
  for (int t = 1; t <= 4; ++t) {
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (std::size_t i = 0; i < n; ++i) {
      g[i] = std::sin(static_cast<float>(i * 7 + t)) * 2.0f;
      // p <- p (1 - lr wd) - lr/bc1 * m / (sqrt(v)/sqrt(bc2) + eps), on the scaled gradient.
      const double gs = static_cast<double>(g[i]) * scale;
      rm[i] = b1 * rm[i] + (1 - b1) * gs;
      rv[i] = b2 * rv[i] + (1 - b2) * gs * gs;
      rp[i] = rp[i] * (1 - lr * wd) - lr / bc1 * rm[i] / (std::sqrt(rv[i]) / std::sqrt(bc2) + eps);
    }
    const AdamWScalars s{float(lr), float(b1),    float(b2),  float(eps),
                         float(wd), float(scale), float(bc1), float(bc2)};
    adamw_update(p.data(), g.data(), m.data(), v.data(), n, s);
    for (std::size_t i = 0; i < n; ++i) {
      INFO("step " << t << " element " << i);
      CHECK(g[i] == 0.0f);  // the gradient is consumed
      CHECK(m[i] == Approx(rm[i]).epsilon(1e-5).margin(1e-7));
      CHECK(v[i] == Approx(rv[i]).epsilon(1e-5).margin(1e-9));
      CHECK(p[i] == Approx(rp[i]).epsilon(1e-5).margin(1e-6));
    }
  }
  std::vector<float> kept = {1.0f, -2.0f};
  std::vector<float> km(2, 0.0f), kv(2, 0.0f), kp(2, 1.0f);
  adamw_update(kp.data(), kept.data(), km.data(), kv.data(), 2,
               AdamWScalars{0.1f, 0.9f, 0.95f, 1e-8f, 0.0f, 1.0f, 0.1f, 0.05f},
               /*zero_grad=*/false);
  CHECK(kept == std::vector<float>{1.0f, -2.0f});  // left as it was when asked
  CHECK(kp[0] < 1.0f);
  CHECK(kp[1] > 1.0f);
}

TEST_CASE("the fused AdamW pass gives torch.optim.AdamW's update") {
  const std::int64_t n = 10007;  // not a multiple of any vector width
  at::Tensor p = at::randn({n}), m = at::zeros({n}), v = at::zeros({n});
  at::Tensor rp = p.clone(), rm = m.clone(), rv = v.clone();
  const double lr = 3e-4, b1 = 0.9, b2 = 0.95, eps = 1e-8, wd = 0.1, scale = 0.5;
  for (int t = 1; t <= 3; ++t) {
    at::Tensor g = at::randn({n});
    at::Tensor rg = g.clone().mul_(scale);  // the reference: the 1.13 single-tensor AdamW
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    rp.mul_(1 - lr * wd);
    rm.mul_(b1).add_(rg, 1 - b1);
    rv.mul_(b2).addcmul_(rg, rg, 1 - b2);
    rp.addcdiv_(rm, (rv.sqrt() / std::sqrt(bc2)).add_(eps), -lr / bc1);
    const AdamWScalars s{float(lr), float(b1),    float(b2),  float(eps),
                         float(wd), float(scale), float(bc1), float(bc2)};
    adamw_update(p.data_ptr<float>(), g.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(),
                 static_cast<std::size_t>(n), s);
    CHECK(g.abs().max().item<float>() == 0.0f);  // the gradient is consumed
  }
  CHECK(at::allclose(m, rm, 1e-6, 1e-7));
  CHECK(at::allclose(v, rv, 1e-6, 1e-9));
  CHECK(at::allclose(p, rp, 1e-6, 1e-7));
  at::Tensor x = at::randn({n});
  CHECK(sum_of_squares(x.data_ptr<float>(), static_cast<std::size_t>(n)) ==
        Approx(x.to(at::kDouble).pow(2).sum().item<double>()).epsilon(1e-12));
}
