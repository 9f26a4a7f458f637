#pragma once
#include <ATen/core/Tensor.h>

// The elementwise pieces and the linear layer every model computes with, each
// one autograd node with a written-out backward; fp32 on the CPU runs the
// plain-C++ kernels (*_kernel.cpp), other dtypes and devices ATen (rms_norm on
// CUDA: LibTorch's fused kernel, 2.8 or newer).
namespace wireup::train::ops {

// x [..., n], w [n]: x / rms(x) * w.
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps);
// x W^T without bias: x [..., in], w [out, in]. fp32 on the CPU with oneDNN
// built in: its sgemm (cpu_gemm.hpp) forward and backward; else ATen's linear.
at::Tensor linear(const at::Tensor& x, const at::Tensor& w);
// silu(gate) * up of gate_up = [gate | up] along the last dimension.
at::Tensor swiglu(const at::Tensor& gate_up);
// The mean over rows of fp32 logits [N, V] against targets [N] (ids checked
// against V by the caller, on the host).
at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets);
// Each row's cross-entropy, [N] (the negated log-prob of its target): the
// rows' losses weighted one by one in backward (DPO's per-completion sums).
at::Tensor cross_entropy_rows(const at::Tensor& logits, const at::Tensor& targets);

}  // namespace wireup::train::ops
