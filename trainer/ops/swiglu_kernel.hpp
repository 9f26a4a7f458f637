#pragma once
#include <cstddef>

// SwiGLU on plain fp32 rows (CPU): the fused W1/W3 projection's output holds
// [gate | up] per row, `inter` floats each. One pass each way instead of
// ATen's silu, mul and their backward pieces plus the cat of split's backward.
namespace wireup::train {

// y[r, j] = silu(gate[r, j]) * up[r, j]. gu: rows x 2*inter, y: rows x inter.
void swiglu_forward(const float* gu, float* y, std::size_t rows, std::size_t inter);

// dgu = [dy * up * silu'(gate) | dy * silu(gate)]; dy: rows x inter,
// dgu: rows x 2*inter (may not alias gu).
void swiglu_backward(const float* gu, const float* dy, float* dgu, std::size_t rows,
                     std::size_t inter);

}  // namespace wireup::train
