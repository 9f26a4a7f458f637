#pragma once
#include <cstddef>

// RMSNorm on plain fp32 rows (CPU). A row of `n` floats stays in L1, so each
// direction is one pass over memory instead of ATen's chain of small ops.
namespace wireup::train {

// rstd[r] = 1 / sqrt(mean(x[r]^2) + eps); y[r] = x[r] * rstd[r] * w.
void rms_norm_forward(const float* x, const float* w, float* y, float* rstd, std::size_t rows,
                      std::size_t n, float eps);

// With xhat = x * rstd: dx = (dy * w - xhat * mean(dy * w * xhat)) * rstd,
// and dw_acc[j] += sum over the rows of dy * xhat (double, so that many rows
// sum without float drift).
void rms_norm_backward(const float* x, const float* w, const float* rstd, const float* dy,
                       float* dx, double* dw_acc, std::size_t rows, std::size_t n);

}  // namespace wireup::train
