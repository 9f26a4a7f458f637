#pragma once
#include <cstdint>
#include <string>

namespace wireup::train {

struct StepMetrics {
  std::int64_t step = 0;
  std::int64_t max_steps = 0;
  double loss = 0;
  double lr = 0;
  double grad_norm = 0;
  double tokens_per_s = 0;  // global, all ranks
  double mfu = 0;           // fraction of peak; 0 when the peak is unknown
  double step_time_s = 0;
  double peak_mem_mib = 0;  // this process's peak resident set
  double data_wait_s = 0;   // of step_time_s, this rank's time getting its batches
};

// One stable line, key=value, for humans and for SageMaker metric regexes
// such as `loss=([0-9.]+)`:
// "[train] step=12/100 loss=3.456789 lr=3.000e-04 grad_norm=1.2345 ..."
std::string format_step_line(const StepMetrics& m);
// The same figures as one JSON object (a JSONL line).
std::string format_step_json(const StepMetrics& m);

std::string format_validation_line(std::int64_t step, double loss);
std::string format_validation_json(std::int64_t step, double loss);

// Model FLOP utilisation: the model's FLOP/s (global tokens/s times
// flops_per_token, model_config.hpp) over the peak of all ranks
// (peak_flops_per_rank * world). 0 when the peak is not positive.
double model_flops_utilization(double tokens_per_s, double flops_per_token,
                               double peak_flops_per_rank, std::int64_t world);
// The banner of the peak MFU is measured against, e.g.
// "[mfu] peak=0.095 TFLOP/s per rank (measured: 1024^3 fp32 GEMM probe, 0.25 s)"
// or "(given: --peak_tflops)". `source` is the part in parentheses.
std::string format_peak_line(double peak_flops_per_rank, const std::string& source);

// `wireup-train eval`'s result.
struct EvalResult {
  double loss = 0;           // mean next-token cross-entropy over every target
  std::uint64_t tokens = 0;  // targets: windows * context
  std::uint64_t windows = 0;
  std::uint64_t context = 0;
  std::string split;
  std::string data;
  std::string weights;  // "hf:DIR" or "checkpoint:STEP_DIR"
};
// "[eval] loss=2.345678 ppl=10.4402 tokens=4096 windows=64"
std::string format_eval_line(const EvalResult& r);
// The same as one JSON object (plus context, split, data, weights), newline-terminated.
std::string format_eval_json(const EvalResult& r);

}  // namespace wireup::train
