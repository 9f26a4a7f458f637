#include "ops/cpu_gemm.hpp"

#include <stdexcept>
#include <string>

#ifdef WIREUP_HAVE_ONEDNN
#include <dnnl.h>
#endif

namespace wireup::train {

#ifdef WIREUP_HAVE_ONEDNN
bool cpu_sgemm_available() { return true; }
const char* cpu_sgemm_name() { return "onednn"; }
#else
bool cpu_sgemm_available() { return false; }
const char* cpu_sgemm_name() { return "aten"; }
#endif

void cpu_sgemm(bool trans_a, bool trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
               float alpha, const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
               float beta, float* C, std::int64_t ldc) {
  if (M < 0 || N < 0 || K < 0)
    throw std::runtime_error("cpu_sgemm: negative size M=" + std::to_string(M) +
                             " N=" + std::to_string(N) + " K=" + std::to_string(K));
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = beta * C, and beta 0 must not read C
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j)
        C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
    return;
  }
#ifdef WIREUP_HAVE_ONEDNN
  const dnnl_status_t s = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', M, N, K, alpha, A,
                                     lda, B, ldb, beta, C, ldc);
  if (s != dnnl_success)
    throw std::runtime_error("cpu_sgemm: oneDNN's dnnl_sgemm failed (status " +
                             std::to_string(static_cast<int>(s)) + ") for M=" + std::to_string(M) +
                             " N=" + std::to_string(N) + " K=" + std::to_string(K));
#else
  (void)trans_a, (void)trans_b, (void)alpha, (void)A, (void)lda, (void)B, (void)ldb;
  throw std::runtime_error("cpu_sgemm: built without oneDNN (libdnnl-dev); use ATen");
#endif
}

}  // namespace wireup::train
