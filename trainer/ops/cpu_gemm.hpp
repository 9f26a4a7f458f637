#pragma once
#include <cstdint>

// The fp32 GEMM of wireup-train's linear layers on the CPU. Where oneDNN is
// built in (Debian's libdnnl-dev, the library LibTorch itself links), its
// sgemm: 5-10% faster than OpenBLAS's on the model's shapes here (AVX-512),
// which ATen's mm would call. Without it the caller stays on ATen.
namespace wireup::train {

// Whether cpu_sgemm has a library behind it, and its name for the logs
// ("onednn", or "aten" when there is none and ATen does the GEMMs).
bool cpu_sgemm_available();
const char* cpu_sgemm_name();

// Row-major C[M,N] = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T;
// lda, ldb, ldc: elements between rows as stored. beta 0: C is not read.
// Threads: the OpenMP ones of the calling thread (LibTorch's intra-op count).
// Throws std::runtime_error when the library refuses or none is built in.
void cpu_sgemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
               float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
               float beta, float* C, std::int64_t ldc);

}  // namespace wireup::train
