#pragma once
#include <ATen/core/Tensor.h>

#include <string>

#include "config/float8_recipe.hpp"

// The linear layers in float8 (--float8): the forward GEMM and both backward
// GEMMs take float8 operands through ATen's scaled matmul (_scaled_mm, cuBLAS
// on Hopper), with dynamic scales computed from each operand as it is cast
// (config/float8_recipe.hpp: the rule). The weights stay fp32 masters, gathered
// in bf16 as without float8; only the GEMM operands are cast. torchtitan's
// float8 recipes work the same way (the output projection stays in bf16).
namespace wireup::train::ops {

// True when this LibTorch has the scaled matmul (2.5 or newer).
bool float8_built();

// "" when float8 GEMMs of recipe `r` run on `device`, else why not: one
// 16x16 product is tried on the device (a GPU of compute capability 8.9 or
// newer and a CUDA LibTorch with float8 GEMMs).
std::string float8_unavailable(at::Device device, Float8Recipe r);

// One GEMM operand in float8: the values (saturated at the format's maximum)
// and the inverse scale (fp32: a scalar, or [rows, 1] row-wise).
struct Float8Operand {
  at::Tensor values, inv_scale;
};
Float8Operand quantize_float8(const at::Tensor& t, at::ScalarType fp8, bool rowwise);

// a [M, K] times b [N, K] transposed, in float8 (a cast to `ta`, b to `tb`),
// the result in a's dtype. CUDA: ATen's _scaled_mm. CPU (the tests): the same
// quantized operands multiplied in fp32.
at::Tensor float8_gemm(const at::Tensor& a, const at::Tensor& b, at::ScalarType ta,
                       at::ScalarType tb, bool rowwise, bool fast_accum);

// y = x W^T, x [..., in], w [out, in]; dX and dW in float8 too (gradients in
// e5m2 tensorwise, e4m3 row-wise). `in` and `out` must be multiples of 16
// (cuBLAS's float8 layout), and so must the rows of x; other shapes take the
// bf16 path (ops::linear).
at::Tensor float8_linear(const at::Tensor& x, const at::Tensor& w, Float8Recipe r);

}  // namespace wireup::train::ops
