#include "main/run_setup.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <malloc.h>
#include <sys/resource.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "comm/collective_deadline.hpp"
#include "comm/comm_gloo.hpp"
#include "comm/comm_nccl.hpp"
#include "eval/model_size.hpp"
#include "ops/float8_linear.hpp"
#include "runtime/blas_check.hpp"
#include "runtime/device_memory.hpp"
#include "runtime/gemm_probe.hpp"
#include "watchdog/recorded_comm.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

// At glibc's defaults the freed unit buffers, activations and logits go back to
// the kernel and are faulted in and zeroed again next step: ~5% of a CPU step.
// Keep them in the heap (the peak is reached every step anyway), unless the
// user tuned malloc through its own variables.
void keep_freed_memory() {
  for (const char* v : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_"})
    if (std::getenv(v)) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 256 << 20);
}

CommGroups start_ranks(const WorldLayout& w, const ComputeChoice& c) {
  if (c.sharding == Sharding::Hybrid && w.world % w.local_world != 0)
    throw InputError(
        "--sharding_strategy hybrid needs the same number of ranks on every node: world size " +
        std::to_string(w.world) + " is not a multiple of the local world size " +
        std::to_string(w.local_world));
  if (c.sharding == Sharding::Hybrid &&
      w.rank / w.local_world * w.local_world + w.local_rank != w.rank)
    throw InputError(
        "--sharding_strategy hybrid needs node-major ranks (rank = node * "
        "LOCAL_WORLD_SIZE + LOCAL_RANK); use block task distribution");
  const bool gpu = c.device == "cuda";
  if (gpu && !nccl_available())
    throw InputError(
        "--device cuda: this wireup-train was built against a CPU LibTorch "
        "without NCCL; build with the CUDA LibTorch (docs/trainer.md)");
  if (c.bf16 && !gpu)
    throw InputError("--bf16 1 needs --device cuda: on CPU wireup-train computes in fp32");
  if (c.threads > 0) at::set_num_threads(static_cast<int>(c.threads));
  const auto blas = loaded_blas();
  if (w.rank == 0 && blas.reference)
    std::fprintf(stderr,
                 "wireup-train: WARNING: LibTorch uses the reference BLAS (%s), about "
                 "50x slower than OpenBLAS: apt-get install libopenblas0-openmp\n",
                 blas.path.c_str());
  // Every collective through the flight recorder (watchdog/recorded_comm.hpp).
  const CommGroups groups = started_groups(w, gpu ? "nccl_init" : "gloo_init", [&] {
    return gpu ? make_nccl_groups(w, c.sharding) : make_gloo_groups(w, c.sharding);
  });
  if (c.float8 != Float8Recipe::Off) {
    const auto why = ops::float8_unavailable(
        at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(w.local_rank)), c.float8);
    if (!why.empty())
      throw InputError(std::string("--float8 ") + float8_recipe_name(c.float8) + ": " + why);
  }
  return recorded_groups(groups, w, c.sharding);
}

void set_comm_timeout_seconds(double seconds) {
  set_collective_timeout(std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000)));
}

ModelOptions model_options(const WorldLayout& w, const ComputeChoice& c) {
  ModelOptions mo;
  if (c.device == "cuda")
    mo.fsdp.device = at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(w.local_rank));
  if (c.bf16) mo.fsdp.compute_dtype = at::kBFloat16;
  mo.fsdp.activation_checkpointing = c.activation_checkpointing;
  mo.fsdp.prefetch = c.prefetch;
  mo.float8 = c.float8;
  return mo;
}

ModelOptions inference_model_options(const WorldLayout& w, const ComputeChoice& c) {
  ModelOptions mo = model_options(w, c);
  mo.random_init = false;
  mo.fsdp.use = UnitUse::Inference;
  return mo;
}

PeakFlops peak_for_mfu(std::optional<double> given_tflops, at::Device device, at::ScalarType dtype,
                       Comm& world) {
  if (given_tflops) return {*given_tflops * 1e12, "given: --peak_tflops"};
  if (const char* env = std::getenv("WIREUP_PEAK_FLOPS")) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(v > 0) || !std::isfinite(v))
      throw InputError(std::string("WIREUP_PEAK_FLOPS=") + env +
                       ": expected one rank's peak in FLOP/s, a positive number (e.g. 989e12)");
    return {v, "given: WIREUP_PEAK_FLOPS"};
  }
  world.barrier();  // every rank probes at once, as they compute at once
  const GemmProbe p = probe_gemm_peak(device, dtype);
  at::Tensor t = scalar_tensor(p.flops_per_s, device);
  world.all_reduce_sum(t);
  return {t.item<double>() / world.size(),
          "measured: " + p.describe() + (world.size() > 1 ? ", mean of the ranks" : "")};
}

void say(const WorldLayout& w, const std::string& line) {
  if (w.rank == 0) std::printf("%s\n", line.c_str()), std::fflush(stdout);
}

double peak_mem_mib(at::Device device) {
  if (const double gpu = device_peak_mib(device); gpu >= 0) return gpu;
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

}  // namespace wireup::train
