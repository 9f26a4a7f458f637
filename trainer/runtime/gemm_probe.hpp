#pragma once
#include <ATen/core/Tensor.h>

#include <string>

namespace wireup::train {

// A short measurement of the GEMM peak on the device and dtype the model
// computes in, through the model's own linear layer (ops::linear: oneDNN's
// sgemm for fp32 on the CPU where built in, else ATen: OpenBLAS, cuBLAS), on
// the calling thread's intra-op threads. CPU: 1024^3 GEMMs for about 0.25 s;
// CUDA: 8192^3, ten per timed round. The best round counts.
struct GemmProbe {
  double flops_per_s = 0;
  std::int64_t n = 0;            // the GEMM is n x n x n
  double seconds = 0;            // the whole probe, warm-up included
  std::string dtype;             // "fp32", "bf16"
  std::string describe() const;  // "1024^3 fp32 GEMM probe, 0.25 s"
};
GemmProbe probe_gemm_peak(at::Device device, at::ScalarType dtype);

}  // namespace wireup::train
