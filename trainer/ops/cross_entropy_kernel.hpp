#pragma once
#include <cstddef>
#include <cstdint>

// Cross-entropy over rows of plain fp32 logits (CPU), V classes per row. A
// row (V floats) stays in L1/L2 between the passes over it, so each direction
// reads the [rows, V] logits from memory once.
namespace wireup::train {

// lse[r] = log(sum_j exp(logits[r, j])); returns sum_r (lse[r] - logits[r,
// targets[r]]) in double. Targets must be in [0, V).
double cross_entropy_forward(const float* logits, const std::int64_t* targets, float* lse,
                             std::size_t rows, std::size_t V);

// In place: logits[r, j] becomes (exp(logits[r, j] - lse[r]) - [j == targets[r]]) * scale,
// the gradient of scale * sum_r loss_r.
void cross_entropy_backward(float* logits, const std::int64_t* targets, const float* lse,
                            float scale, std::size_t rows, std::size_t V);

}  // namespace wireup::train
