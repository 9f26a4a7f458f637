#include "optim/adamw_kernel.hpp"

#include <cmath>

namespace wireup::train {

// One clone per vector width; the loader picks the widest the CPU has.
__attribute__((target_clones("avx512f", "avx2", "default")))
void adamw_update(float* __restrict param, float* __restrict grad, float* __restrict exp_avg,
                  float* __restrict exp_avg_sq, std::size_t n, const AdamWScalars& s,
                  bool zero_grad) {
  const float decay = 1.0f - s.lr * s.weight_decay;
  const float one_minus_b1 = 1.0f - s.beta1, one_minus_b2 = 1.0f - s.beta2;
  const float sqrt_bc2 = std::sqrt(s.bias_correction2);
  const float step = -s.lr / s.bias_correction1;
  const float scale = s.grad_scale, b1 = s.beta1, b2 = s.beta2, eps = s.eps;
  for (std::size_t i = 0; i < n; ++i) {
    const float g = grad[i] * scale;
    const float m = exp_avg[i] * b1 + g * one_minus_b1;
    const float v = exp_avg_sq[i] * b2 + one_minus_b2 * (g * g);
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float denom = std::sqrt(v) / sqrt_bc2 + eps;
    param[i] = param[i] * decay + step * (m / denom);
    if (zero_grad) grad[i] = 0.0f;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default")))
double sum_of_squares(const float* __restrict x, std::size_t n) {
  double total = 0;
#pragma omp simd reduction(+ : total)
  for (std::size_t i = 0; i < n; ++i) total += static_cast<double>(x[i]) * x[i];
  return total;
}

}  // namespace wireup::train
