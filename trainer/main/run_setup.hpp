#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "checkpoint/checkpointer.hpp"
#include "comm/comm.hpp"
#include "comm/world_layout.hpp"
#include "config/train_options.hpp"
#include "models/sharded_model.hpp"
#include "optim/sharded_adamw.hpp"

// What training (train_main.cpp) and evaluation (eval_main.cpp) share: the
// process settings, the checks that need the world layout and the build, the
// groups, the FSDP options, the peak for MFU, rank 0's lines.
namespace wireup::train {

// glibc keeps freed buffers in the heap (unless the user tuned malloc).
void keep_freed_memory();

// Checks what needs the layout or the build before any collective (hybrid
// sharding's node-major ranks, a CUDA build for --device cuda, bf16 only on
// GPUs), sets the thread count, warns about the reference BLAS, and makes
// the groups of the sharding strategy. Throws InputError.
CommGroups start_ranks(const WorldLayout& w, const ComputeChoice& c);
// How long every collective waits from now on (--comm_init_timeout or
// --comm_timeout); a peer that does not arrive in time ends the rank with
// exit status 3 (watchdog/, docs/reliability.md).
void set_comm_timeout_seconds(double seconds);
ModelOptions model_options(const WorldLayout& w, const ComputeChoice& c);
// The same for eval and generate: forward passes only, every parameter set
// by load_weights (no random initialisation, no gradient shards).
ModelOptions inference_model_options(const WorldLayout& w, const ComputeChoice& c);

// The peak one rank is measured against for MFU, and where it came from:
// --peak_tflops (`given`), else WIREUP_PEAK_FLOPS (FLOP/s), else a GEMM probe
// on every rank at once (probe_gemm_peak), averaged over the world so that
// every rank reports the same figure.
struct PeakFlops {
  double flops_per_s = 0;
  std::string source;  // "given: --peak_tflops", "measured: 1024^3 fp32 GEMM probe, 0.25 s"
};
PeakFlops peak_for_mfu(std::optional<double> given_tflops, at::Device device, at::ScalarType dtype,
                       Comm& world);

// One line on rank 0's stdout, flushed.
void say(const WorldLayout& w, const std::string& line);

// The GPU allocator's peak on CUDA, else the process's peak resident set.
double peak_mem_mib(at::Device device);

}  // namespace wireup::train
