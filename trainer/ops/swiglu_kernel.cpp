#include "ops/swiglu_kernel.hpp"

#include "ops/vec_exp.hpp"

namespace wireup::train {

// One clone per vector width (v3: AVX2 + FMA, v4: AVX-512); the loader picks
// the widest the CPU has.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void swiglu_forward(const float* __restrict gu, float* __restrict y, std::size_t rows,
                    std::size_t inter) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* __restrict gate = gu + r * 2 * inter;
    const float* __restrict up = gate + inter;
    float* __restrict out = y + r * inter;
    for (std::size_t j = 0; j < inter; ++j) {
      const float g = gate[j];
      out[j] = g * (1.0f / (1.0f + vec_exp(-g))) * up[j];  // silu as backward has it
    }
  }
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void swiglu_backward(const float* __restrict gu, const float* __restrict dy,
                     float* __restrict dgu, std::size_t rows, std::size_t inter) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* __restrict gate = gu + r * 2 * inter;
    const float* __restrict up = gate + inter;
    const float* __restrict d = dy + r * inter;
    float* __restrict dgate = dgu + r * 2 * inter;
    float* __restrict dup = dgate + inter;
    for (std::size_t j = 0; j < inter; ++j) {
      const float g = gate[j];
      const float s = 1.0f / (1.0f + vec_exp(-g));  // sigmoid: the one division
      dup[j] = d[j] * (g * s);
      // silu'(g) = s * (1 + g * (1 - s)), as ATen's silu_backward
      dgate[j] = d[j] * up[j] * (s * (1.0f + g * (1.0f - s)));
    }
  }
}

}  // namespace wireup::train
