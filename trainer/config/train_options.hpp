#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/component_configs.hpp"
#include "config/compute_flags.hpp"
#include "config/float8_recipe.hpp"
#include "config/sharding.hpp"
#include "lora/lora_config.hpp"
#include "models/model_config.hpp"
#include "preference/dpo_objective.hpp"
#include "wireup/data/batch_source.hpp"

namespace wireup::train {

// Everything wireup-train takes on its command line. Flag names follow the
// awsome-distributed-training FSDP test case, so its sbatch lines work as is.
// A component's flags bind to the settings it takes (component_configs.hpp:
// `checkpoint`, `adamw`; the loader's `data`), the fields that other flags
// decide filled in once by parse_train_options; the rest are the run's own.
struct TrainOptions {
  ModelConfig model;
  std::string preset = "small";
  bool preset_given = false;            // --preset on the command line
  ShapeFlags shape_flags;               // the shape flags given, over the preset (or config.json)
  std::string model_type = "llama_v2";  // accepted for compatibility; shapes decide

  std::int64_t train_batch_size = 4;  // sequences per rank per micro-step
  std::int64_t val_batch_size = 4;
  std::int64_t grad_accum = 1;  // micro-steps per optimizer step
  std::int64_t max_steps = 100;
  double lr = 3e-4;
  double min_lr = 3e-5;
  std::int64_t warmup_steps = 0;
  AdamWConfig adamw;       // --beta1 --beta2 --weight_decay
  double grad_clip = 1.0;  // 0: off
  // --device, --bf16, --float8, --sharding_strategy, --num_threads,
  // --activation_checkpointing, --prefetch (compute_flags.hpp).
  ComputeChoice compute;

  std::int64_t logging_freq = 1;
  std::int64_t validation_freq = 0;  // 0: never
  std::int64_t validation_batches = 4;
  // --checkpoint_dir, --checkpoint_freq, --keep_checkpoints (default 3),
  // --async_checkpointing, --stop_after_step (> 0: checkpoint and exit after
  // it, as on SIGTERM), --start_fresh_if_unloadable (auto resume: step 1 when
  // no checkpoint loads); its max_steps and io_timeout_s are --max_steps and
  // --comm_init_timeout.
  CheckpointPolicy checkpoint = [] {
    CheckpointPolicy p;
    p.keep = 3;
    return p;
  }();
  // --memory_checkpoint_freq, --memory_checkpoint_dir; io_timeout_s is --comm_init_timeout.
  MemorySnapshotPolicy memory_checkpoint;
  // "auto": the newest complete state in --checkpoint_dir, or (with memory
  // snapshots) in memory or a peer's replica when newer
  std::string resume_from_checkpoint;
  std::string init_from_hf;  // Hugging Face model dir: initial weights (fine-tuning)
  // A wireup checkpoint's weights as the initial ones (its optimizer state
  // unread): a step directory or a checkpoint directory (its newest complete step).
  std::string init_from_checkpoint;
  // --lora_rank, --lora_alpha, --lora_dropout, --lora_targets: LoRA adapters
  // trained on the frozen initial weights (rank 0: off; docs/lora.md).
  lora::LoraConfig lora;
  // --dpo_beta, --dpo_loss, --dpo_label_smoothing, --dpo_sft_weight: the DPO
  // objective a preference data set trains (docs/dpo.md).
  preference::DpoSettings dpo;

  // The training split's loader: --dataset (manifest.json or its directory
  // from wireup-prep; empty: synthetic tokens), --epochs (0: until
  // --max_steps), --data_readahead (steps of shard data the kernel is asked
  // to fetch ahead); its seed and grad_accum are --seed's and
  // --gradient_accumulation_steps'; the split, context, batch and rank are
  // set where each split is opened.
  data::BatchSourceConfig data = [] {
    data::BatchSourceConfig c;
    c.epochs = 1;
    return c;
  }();
  bool synthetic_data = false;  // deterministic random tokens, for tests and benchmarks
  // Chat data sets (packed conversations): each token attends only to its
  // own conversation and its RoPE position counts from the conversation's start.
  bool document_masking = true;
  std::uint64_t seed = 1234;
  std::string metrics_file;     // JSONL, one object per logged step
  std::string tensorboard_dir;  // rank 0's TensorBoard event files (tensorboard/); empty: none
  // How long a collective waits for the other ranks before this rank names
  // the ones missing and exits 3 (watchdog/): --comm_init_timeout during
  // start-up, the first step and checkpoint loads and saves, --comm_timeout after.
  double comm_timeout = 100;
  double comm_init_timeout = 600;
  // --straggler_ratio, --straggler_steps: rank 0 warns about a rank whose
  // compute time is above ratio x the median on that many logged steps in a row.
  double straggler_ratio = 1.3;
  std::int64_t straggler_steps = 10;
  // --profile_steps A:B: each rank writes the phases of steps A..B as
  // PROFILE_DIR/trace-RANK.json (profile/step_trace.hpp); last < first: off.
  std::int64_t profile_first = 0, profile_last = -1;
  std::string profile_dir = ".";
  // --peak_tflops: one rank's peak in TFLOP/s for MFU; unset: measured at start
  // (a GEMM probe) unless WIREUP_PEAK_FLOPS gives it.
  std::optional<double> peak_tflops;
};

// Parses argv (without argv[0]'s program name handling: pass main's argc/argv).
// Throws InputError naming an unknown flag or bad value; returns false (and
// prints usage) for --help.
bool parse_train_options(int argc, const char* const* argv, TrainOptions& out);

// --profile_steps: "A:B", whole step numbers with 1 <= A <= B. Throws
// InputError naming the flag, the text and what was expected.
std::pair<std::int64_t, std::int64_t> parse_profile_steps(const std::string& text);

// Cross-checks that need the world layout: a world size that does not fit the
// sharding strategy, batch sizes, data source. Throws InputError.
void check_train_options(const TrainOptions& o, std::int64_t world_size,
                         std::int64_t local_world_size);

}  // namespace wireup::train
