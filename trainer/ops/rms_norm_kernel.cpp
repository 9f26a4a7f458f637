#include "ops/rms_norm_kernel.hpp"

#include <cmath>

namespace wireup::train {

// One clone per vector width (v3: AVX2 + FMA, v4: AVX-512); the loader picks
// the widest the CPU has.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void rms_norm_forward(const float* __restrict x, const float* __restrict w, float* __restrict y,
                      float* __restrict rstd, std::size_t rows, std::size_t n, float eps) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * n;
    float* __restrict yr = y + r * n;
    float ss = 0;
#pragma omp simd reduction(+ : ss)
    for (std::size_t j = 0; j < n; ++j) ss += xr[j] * xr[j];
    const float rs = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
    rstd[r] = rs;
    for (std::size_t j = 0; j < n; ++j) yr[j] = xr[j] * rs * w[j];
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void rms_norm_backward(const float* __restrict x, const float* __restrict w,
                       const float* __restrict rstd, const float* __restrict dy,
                       float* __restrict dx, double* __restrict dw_acc, std::size_t rows,
                       std::size_t n) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* __restrict xr = x + r * n;
    const float* __restrict dyr = dy + r * n;
    float* __restrict dxr = dx + r * n;
    const float rs = rstd[r];
    float dot = 0;  // sum of dy * w * x; times rstd / n it is mean(dy * w * xhat)
#pragma omp simd reduction(+ : dot)
    for (std::size_t j = 0; j < n; ++j) dot += dyr[j] * w[j] * xr[j];
    const float c = dot * rs / static_cast<float>(n);
    for (std::size_t j = 0; j < n; ++j) {
      const float xhat = xr[j] * rs;
      dxr[j] = (dyr[j] * w[j] - xhat * c) * rs;
      dw_acc[j] += static_cast<double>(dyr[j] * xhat);
    }
  }
}

}  // namespace wireup::train
