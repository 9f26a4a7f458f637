#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/model_config.hpp"
#include "preference/dpo_objective.hpp"

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
  // The ranks' compute time this step (step time less getting batches and
  // waiting in collectives: profile/straggler.hpp); slowest_rank -1: not measured.
  double compute_min_s = 0, compute_median_s = 0, compute_max_s = 0;
  int slowest_rank = -1;
  // Chat data sets: the step's targets in the loss, all ranks and micro-steps
  // (-1: every target, not printed).
  std::int64_t trained_tokens = -1;
  // Preference data (DPO): the step's pairs' metrics, all ranks and micro-steps
  // (`loss` is then their dpo loss). TRL's names in the JSONL file and
  // TensorBoard, shorter ones in the line (docs/dpo.md, "Metrics").
  std::optional<preference::DpoMetrics> dpo;
};

// One figure of a logged step: its key in the [train] line, its key in the
// JSONL object, its value, how the line prints it, its TensorBoard tag.
struct StepFigure {
  std::string key;   // "loss", "chosen_reward"; "": not in the line
  std::string json;  // "loss", "rewards/chosen"
  double value = 0;
  const char* line_format;  // printf: "%.6f"
  std::string tag;          // "train/loss", "train/rewards/chosen"
  bool integer = false;     // an integer in the JSONL object
};
// A logged step's figures, in the line's order: the one list of them, which the
// [train] line, the JSONL metrics file and TensorBoard each render. Optional
// figures (trained_tokens, the compute spread) are listed where measured.
struct StepRecord {
  std::int64_t step = 0;
  std::int64_t max_steps = 0;
  std::vector<StepFigure> figures;
};
StepRecord step_record(const StepMetrics& m);

// One stable line, key=value, for humans and for SageMaker metric regexes
// such as `loss=([0-9.]+)`:
// "[train] step=12/100 loss=3.456789 lr=3.000e-04 grad_norm=1.2345 ...
// slowest_rank=1 compute_min_s=0.201 compute_median_s=0.230 compute_max_s=0.512"
std::string format_step_line(const StepRecord& r);
// The same figures as one JSON object (a JSONL line), every value as the double
// (or integer) it is: {"type":"train","step":12,"loss":3.456789123,...}.
std::string format_step_json(const StepRecord& r);

// "[val] step=20 val_loss=2.000000 val_ppl=7.389"; on preference data
// (`dpo`): "[val] step=20 val_loss=0.693147 val_reward_accuracy=0.500000
// val_reward_margin=... val_chosen_reward=... val_rejected_reward=..." (no
// perplexity: a DPO loss is not a cross-entropy), and the JSON object adds
// TRL's names with val_: "val_rewards/chosen", ..., "val_logps/rejected".
std::string format_validation_line(std::int64_t step, double loss,
                                   const std::optional<preference::DpoMetrics>& dpo = {});
std::string format_validation_json(std::int64_t step, double loss,
                                   const std::optional<preference::DpoMetrics>& dpo = {});

// Model FLOP utilisation: the model's FLOP/s (global tokens/s times
// flops_per_token, model_config.hpp) over the peak of all ranks
// (peak_flops_per_rank * world). 0 when the peak is not positive.
double model_flops_utilization(double tokens_per_s, double flops_per_token,
                               double peak_flops_per_rank, std::int64_t world);
// The banner of the peak MFU is measured against, e.g.
// "[mfu] peak=0.095 TFLOP/s per rank (measured: 1024^3 fp32 GEMM probe, 0.25 s)"
// or "(given: --peak_tflops)". `source` is the part in parentheses.
std::string format_peak_line(double peak_flops_per_rank, const std::string& source);

// What wireup-train reports before its first step.
struct RunConfig {
  std::string preset;
  std::int64_t params = 0;
  std::int64_t params_per_rank = 0;  // this rank's shards, padding included
  std::int64_t state_bytes_per_rank = 0;
  int world = 1;
  int local_world = 1;
  std::string sharding;
  ModelConfig model;
  std::int64_t batch_per_rank = 0;
  std::int64_t grad_accum = 1;
  std::int64_t max_steps = 0;
  double lr = 0;
  int threads = 0;
  bool activation_checkpointing = false;
  std::string blas;  // the BLAS library LibTorch loaded
  std::string gemm;  // what the linear layers use: cuda, cuda-float8-RECIPE, onednn, aten
};
// "[config] preset=small params=19796480 params_per_rank=... gemm=onednn": one
// line of key=value (nodes and global_batch_tokens derived).
std::string format_config_line(const RunConfig& c);

// What wireup-train reports after its last step.
struct RunSummary {
  std::int64_t steps = 0;
  double first_loss = 0;
  double final_loss = 0;
  std::int64_t tokens = 0;
  double step_time_s = 0;  // of all steps: mean tokens/s and the data wait's share
  double wall_s = 0;
  double peak_mem_mib = 0;
  int checkpoint_saves = 0;
  double checkpoint_stall_s = 0;
  double data_wait_s = 0;
};
// "[summary] steps=100 first_loss=... data_wait_pct=0.123"
std::string format_summary_line(const RunSummary& s);

// `wireup-train eval`'s result.
struct EvalResult {
  double loss = 0;           // mean next-token cross-entropy over every target
  std::uint64_t tokens = 0;  // targets: windows * context
  std::uint64_t windows = 0;
  std::uint64_t context = 0;
  std::string split;
  std::string data;
  std::string weights;  // "hf:DIR" or "checkpoint:STEP_DIR"
  // Preference data: every pair of the split, with --dpo_beta (`loss` unused).
  std::optional<preference::DpoMetrics> dpo;
};
// "[eval] loss=2.345678 ppl=10.4402 tokens=4096 windows=64"; on preference
// data "[eval] dpo_loss=0.693147 reward_accuracy=0.500000 reward_margin=...
// chosen_reward=... rejected_reward=... pairs=64"
std::string format_eval_line(const EvalResult& r);
// The same as one JSON object (plus context, split, data, weights), newline-terminated.
std::string format_eval_json(const EvalResult& r);

}  // namespace wireup::train
