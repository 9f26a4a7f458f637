#pragma once
#include <cstddef>

// The optimizer's inner loops on plain fp32 arrays (CPU shards): one pass over
// parameter, gradient and moments instead of one ATen call per term. No Torch
// here, so it is unit-tested on its own and compiled with vectorized math.
namespace wireup::train {

struct AdamWScalars {
  float lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;
  float grad_scale = 1;      // applied to the gradient first (clipping)
  float bias_correction1 = 1;  // 1 - beta1^t
  float bias_correction2 = 1;  // 1 - beta2^t
};

// torch.optim.AdamW's update, term by term in the same order and precision
// as its single-tensor path; then zeroes the gradient if `zero_grad` (a
// gradient that is dropped after the step need not be written).
void adamw_update(float* param, float* grad, float* exp_avg, float* exp_avg_sq, std::size_t n,
                  const AdamWScalars& s, bool zero_grad = true);

// Sum of squares, accumulated in double.
double sum_of_squares(const float* x, std::size_t n);

}  // namespace wireup::train
