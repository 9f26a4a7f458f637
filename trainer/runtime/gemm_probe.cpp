#include "runtime/gemm_probe.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "ops/fused_ops.hpp"

namespace wireup::train {

std::string GemmProbe::describe() const {
  char buf[120];
  std::snprintf(buf, sizeof buf, "%lld^3 %s GEMM probe, %.2f s", static_cast<long long>(n),
                dtype.c_str(), seconds);
  return buf;
}

GemmProbe probe_gemm_peak(at::Device device, at::ScalarType dtype) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const bool cpu = device.is_cpu();
  GemmProbe p;
  p.n = cpu ? 1024 : 8192;
  p.dtype = dtype == at::kBFloat16 ? "bf16" : dtype == at::kHalf ? "fp16" : "fp32";
  const int per_round = cpu ? 1 : 10;
  const double budget_s = cpu ? 0.25 : 0.5;
  at::NoGradGuard no_grad;
  const auto opts = at::TensorOptions().dtype(dtype).device(device);
  const at::Tensor x = at::randn({p.n, p.n}, opts), w = at::randn({p.n, p.n}, opts);
  // item() waits for the device: a round's time is its GEMMs' time.
  auto round = [&] {
    at::Tensor y;
    const auto r0 = clock::now();
    for (int i = 0; i < per_round; ++i) y = ops::linear(x, w);
    (void)y.select(0, 0).select(0, 0).item<double>();
    return std::chrono::duration<double>(clock::now() - r0).count();
  };
  round();  // warm-up: threads started, pages touched, kernels chosen
  double best = 1e30;
  for (int r = 0; r < 50; ++r) {
    best = std::min(best, round());
    if (r >= 2 && std::chrono::duration<double>(clock::now() - t0).count() > budget_s) break;
  }
  const double flops = 2.0 * static_cast<double>(p.n) * p.n * p.n * per_round;
  p.flops_per_s = flops / best;
  p.seconds = std::chrono::duration<double>(clock::now() - t0).count();
  return p;
}

}  // namespace wireup::train
