#pragma once
#include <cstdint>
#include <string>
#include <vector>

// Where a training step's GPU time goes (wireup-train-breakdown): each kernel
// the profiler saw, by name, put into one phase. Plain C++, unit-tested.
namespace wireup::train {

enum class KernelPhase {
  Gemm,          // cuBLAS / CUTLASS matrix products, float8 scaled ones included
  Attention,     // flash / memory-efficient attention, forward and backward
  Float8Casts,   // casts to and from float8 (amax reductions land in Elementwise)
  Optimizer,     // AdamW (fused or multi-tensor)
  CrossEntropy,  // logsumexp, the targets' gather and scatter
  Copies,        // memcpy, memset, copies between dtypes and layouts, cat
  Collectives,   // NCCL
  Elementwise,   // norms, RoPE, SwiGLU, residual adds, reductions: the rest
};
const char* phase_name(KernelPhase p);

// The phase of a kernel from its (demangled) name.
KernelPhase classify_kernel(const std::string& name);

struct KernelTime {
  std::string name;
  std::uint64_t ns = 0;
};

struct PhaseTotal {
  KernelPhase phase;
  std::uint64_t ns = 0;
  std::int64_t kernels = 0;
};

// Totals of every phase (all eight, in enum order) over `kernels`.
std::vector<PhaseTotal> phase_totals(const std::vector<KernelTime>& kernels);

// The report: "[breakdown] phase=gemm ms=12.345 share=0.456 kernels=123", one
// line a phase, then "[breakdown] total ms=... wall_ms=... busy=..." (GPU time
// over the step's wall time), then the `top` kernels by time ("[kernel] ms=...
// phase=... name=..."), names cut to 120 characters.
std::string format_breakdown(const std::vector<KernelTime>& kernels, double wall_ms, int top);

}  // namespace wireup::train
