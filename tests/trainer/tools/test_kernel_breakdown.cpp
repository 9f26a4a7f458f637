// wireup-train breakdown's phases (tools/kernel_breakdown.hpp), no Torch:
// kernel names as LibTorch's CUDA builds, cuBLAS and NCCL spell them.
#include <catch2/catch.hpp>

#include "tools/kernel_breakdown.hpp"

using namespace wireup::train;

TEST_CASE("kernels fall into their phases by name") {
  CHECK(classify_kernel("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64") ==
        KernelPhase::Gemm);
  CHECK(classify_kernel("nvjet_tst_192x192_64x3_2x1_v_bz_coopB_TNT") == KernelPhase::Gemm);
  CHECK(classify_kernel("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16>(...)") ==
        KernelPhase::Gemm);
  CHECK(classify_kernel("void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<>") ==
        KernelPhase::Attention);
  CHECK(classify_kernel("void at::native::(anonymous namespace)::fused_adamw_kernel<float>") ==
        KernelPhase::Optimizer);
  CHECK(classify_kernel("void at::native::vectorized_elementwise_kernel<4, "
                        "at::native::direct_copy_kernel_cuda<c10::Float8_e4m3fn>>") ==
        KernelPhase::Float8Casts);
  CHECK(classify_kernel("Memcpy DtoD (Device -> Device)") == KernelPhase::Copies);
  CHECK(classify_kernel("void at::native::(anonymous namespace)::cunn_SoftMaxForward<logsumexp>") ==
        KernelPhase::CrossEntropy);
  CHECK(classify_kernel("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)") ==
        KernelPhase::Collectives);
  CHECK(classify_kernel("void at::native::vectorized_elementwise_kernel<4, "
                        "at::native::AUnaryFunctor<float, float, float, MulFunctor<float>>>") ==
        KernelPhase::Elementwise);
}

TEST_CASE("the report sums each phase, its share, the GPU's busy fraction and the top kernels") {
  const std::vector<KernelTime> k = {{"sm90_xmma_gemm_a", 6'000'000},
                                     {"sm90_xmma_gemm_a", 2'000'000},
                                     {"flash_fwd_kernel", 1'000'000},
                                     {"vectorized_elementwise_kernel<add>", 1'000'000}};
  const auto totals = phase_totals(k);
  REQUIRE(totals.size() == 8);
  CHECK(totals[0].phase == KernelPhase::Gemm);
  CHECK(totals[0].ns == 8'000'000);
  CHECK(totals[0].kernels == 2);
  const std::string r = format_breakdown(k, 20.0, 2);
  CHECK_THAT(r, Catch::Contains("[breakdown] phase=gemm ms=8.000 share=0.800 kernels=2\n"));
  CHECK_THAT(r, Catch::Contains("[breakdown] phase=attention ms=1.000 share=0.100 kernels=1\n"));
  CHECK_THAT(r, Catch::Contains("[breakdown] phase=optimizer ms=0.000 share=0.000 kernels=0\n"));
  CHECK_THAT(r, Catch::Contains("[breakdown] total ms=10.000 wall_ms=20.000 busy=0.500\n"));
  CHECK_THAT(r, Catch::Contains("[kernel] ms=8.000 phase=gemm name=sm90_xmma_gemm_a\n"));
  // top 2: the third kernel by time is left out
  CHECK(r.find("[kernel]", r.find("[kernel]", r.find("[kernel]") + 1) + 1) == std::string::npos);
}
