#include "ops/cross_entropy_kernel.hpp"

#include <cmath>

#include "ops/vec_exp.hpp"

namespace wireup::train {

// One clone per vector width (v3: AVX2 + FMA, v4: AVX-512); the loader picks
// the widest the CPU has.
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
double cross_entropy_forward(const float* __restrict logits, const std::int64_t* __restrict targets,
                             float* __restrict lse, std::size_t rows, std::size_t V) {
  double total = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* __restrict l = logits + r * V;
    float mx = l[0];
#pragma omp simd reduction(max : mx)
    for (std::size_t j = 0; j < V; ++j) mx = l[j] > mx ? l[j] : mx;
    if (!std::isfinite(mx)) mx = 0;  // all -inf, or inf/NaN: let the sum say so
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (std::size_t j = 0; j < V; ++j) sum += vec_exp(l[j] - mx);
    // A zero sum (every logit -inf) gives -inf, as logsumexp does.
    // cppcheck-suppress invalidFunctionArg
    lse[r] = std::log(sum) + mx;
    total += static_cast<double>(lse[r] - l[targets[r]]);
  }
  return total;
}

__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
void cross_entropy_backward(float* __restrict logits, const std::int64_t* __restrict targets,
                            const float* __restrict lse, float scale, std::size_t rows,
                            std::size_t V) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* __restrict g = logits + r * V;
    const float m = lse[r];
    const std::size_t t = static_cast<std::size_t>(targets[r]);
    const float at_target = (vec_exp(g[t] - m) - 1.0f) * scale;
    for (std::size_t j = 0; j < V; ++j) g[j] = vec_exp(g[j] - m) * scale;
    g[t] = at_target;
  }
}

}  // namespace wireup::train
