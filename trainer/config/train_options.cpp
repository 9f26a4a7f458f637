#include "config/train_options.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>
#include <utility>

#include "config/command_line.hpp"
#include "config/component_flags.hpp"
#include "models/family_registry.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

const char* sharding_name(Sharding s) {
  switch (s) {
    case Sharding::Full:
      return "full";
    case Sharding::Hybrid:
      return "hybrid";
    case Sharding::None:
      return "none";
  }
  return "?";
}

Sharding parse_sharding(const std::string& name) {
  if (name == "hybrid" || name == "HYBRID_SHARD") return Sharding::Hybrid;
  if (name == "none" || name == "NO_SHARD") return Sharding::None;
  return Sharding::Full;
}

namespace {
std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void add_model_flags(CLI::App& app, TrainOptions& o) {
  auto shape = [&app](const char* flag, std::optional<std::int64_t>& field, const char* help) {
    app.add_option_function<std::int64_t>(
        flag, [&field](std::int64_t v) { field = v; }, help);
  };
  app.add_option_function<std::string>(
         "--preset",
         [&o](const std::string& v) {
           o.preset = v;
           o.preset_given = true;
         },
         "model preset (with --init_from_hf or --init_from_checkpoint: the shape is "
         "config.json's or the checkpoint's)")
      ->check(CLI::IsMember(preset_names()));
  app.add_option("--model_type", o.model_type, "llama_v2 or llama_v3 (compatibility)");
  shape("--max_context_width", o.shape_flags.context, "sequence length T");
  shape("--vocab_size", o.shape_flags.vocab, "vocabulary size");
  shape("--hidden_width", o.shape_flags.hidden, "model width");
  shape("--num_layers", o.shape_flags.layers, "transformer blocks");
  shape("--num_heads", o.shape_flags.heads, "attention heads");
  shape("--num_key_value_heads", o.shape_flags.kv_heads, "KV heads (GQA)");
  shape("--intermediate_size,--llama_intermediate_size", o.shape_flags.intermediate, "FFN width");
  shape("--head_dim", o.shape_flags.head_dim,
        "attention head width, where the family allows another (default hidden / heads)");
  std::string families;
  for (const auto& n : family_names())
    families += (families.empty() ? "" : ", ") + n + " (" + model_family(n).display + ")";
  app.add_option("--model_family", o.shape_flags.family,
                 "one of " + families + " (default per preset or config.json)")
      ->check(CLI::IsMember(family_names()));
  app.add_option("--rope_theta", o.shape_flags.rope_theta, "rotary base (default per preset)");
  app.add_option("--rope_scaling", o.shape_flags.rope_scaling,
                 "none or llama3:FACTOR,LOW,HIGH,ORIGINAL_CONTEXT (default per preset)");
  app.add_option("--tie_word_embeddings", o.shape_flags.tie,
                 "1: the output projection is the embedding matrix (default per preset)")
      ->check(CLI::IsMember({0, 1}));
}

void add_optimization_flags(CLI::App& app, TrainOptions& o) {
  app.add_option("--train_batch_size", o.train_batch_size, "sequences per rank per micro-step");
  app.add_option("--val_batch_size", o.val_batch_size, "validation sequences per rank");
  app.add_option("--gradient_accumulation_steps,--grad_accum", o.grad_accum,
                 "micro-steps per optimizer step");
  app.add_option("--max_steps", o.max_steps, "optimizer steps");
  app.add_option("--lr", o.lr, "peak learning rate");
  app.add_option("--min_lr", o.min_lr, "final learning rate of the cosine decay");
  app.add_option("--warmup_steps", o.warmup_steps, "linear warmup steps");
  app.add_option("--weight_decay", o.adamw.weight_decay, "AdamW weight decay");
  app.add_option("--beta1", o.adamw.beta1);
  app.add_option("--beta2", o.adamw.beta2);
  app.add_option("--grad_clip", o.grad_clip, "global gradient norm limit (0: off)");
  add_compute_flags(app, o.compute, ComputeFlags::Train);
}

void add_run_flags(CLI::App& app, TrainOptions& o) {
  app.add_option("--logging_freq", o.logging_freq, "steps between log lines");
  app.add_option("--validation_freq", o.validation_freq, "steps between validations (0: off)");
  app.add_option("--validation_batches", o.validation_batches, "batches per validation");
  app.add_option("--init_from_hf", o.init_from_hf,
                 "start from a Hugging Face checkpoint (config.json + model.safetensors); "
                 "a resumed checkpoint takes precedence");
  app.add_option("--init_from_checkpoint", o.init_from_checkpoint,
                 "start from a wireup checkpoint's weights (its optimizer state unread): a step "
                 "directory or a checkpoint directory; a resumed checkpoint takes precedence");
  add_checkpoint_flags(app, o.checkpoint, o.memory_checkpoint, o.resume_from_checkpoint);
  add_data_flags(app, o.data, o.synthetic_data, o.document_masking);
  add_lora_flags(app, o.lora);
  add_dpo_flags(app, o.dpo);
  app.add_option("--seed", o.seed, "seed for init and data order");
  app.add_option("--metrics_file", o.metrics_file, "JSONL metrics output");
  app.add_option("--tensorboard_dir", o.tensorboard_dir,
                 "rank 0 writes TensorBoard event files of the [train] and [val] figures here "
                 "(created if missing; a resume appends)");
  app.add_option("--comm_timeout", o.comm_timeout,
                 "seconds a collective waits for the other ranks once the first step has "
                 "completed; then the rank names the missing ones and exits 3");
  app.add_option("--comm_init_timeout", o.comm_init_timeout,
                 "the same during start-up, the first step and checkpoint loads and saves");
  app.add_option("--straggler_ratio", o.straggler_ratio,
                 "rank 0 warns about a rank whose compute time is above this many times the "
                 "ranks' median ...");
  app.add_option("--straggler_steps", o.straggler_steps, "... on this many logged steps in a row");
  app.add_option_function<std::string>(
      "--profile_steps",
      [&o](const std::string& v) {
        if (!v.empty()) std::tie(o.profile_first, o.profile_last) = parse_profile_steps(v);
      },
      "A:B: each rank writes the phases of steps A..B to PROFILE_DIR/trace-RANK.json "
      "(Chrome trace format; Perfetto opens it)");
  app.add_option("--profile_dir", o.profile_dir,
                 "where --profile_steps writes its traces (default: the working directory)");
  app.add_option_function<double>(
      "--peak_tflops", [&o](double v) { o.peak_tflops = v; },
      "one rank's peak TFLOP/s for MFU (default: measured at start by a "
      "GEMM probe on the device and dtype used)");
}

// The straggler report's and the step trace's flags.
void check_observability_options(const TrainOptions& o) {
  if (!(std::isfinite(o.straggler_ratio) && o.straggler_ratio > 1 && o.straggler_ratio <= 1000))
    throw InputError("--straggler_ratio " + format_number(o.straggler_ratio) +
                     ": expected a ratio to the median above 1 and at most 1000 (e.g. 1.3)");
  if (o.straggler_steps < 1 || o.straggler_steps > 1000000)
    throw InputError("--straggler_steps " + std::to_string(o.straggler_steps) +
                     ": expected 1 to 1000000 logged steps");
  if (o.profile_last >= o.profile_first && o.profile_first > o.max_steps)
    throw InputError("--profile_steps " + std::to_string(o.profile_first) + ":" +
                     std::to_string(o.profile_last) + ": starts after --max_steps " +
                     std::to_string(o.max_steps) + ", so it would trace nothing");
}

}  // namespace

bool parse_train_options(int argc, const char* const* argv, TrainOptions& o) {
  CLI::App app{"wireup-train: fully sharded training of decoder LLMs on LibTorch"};
  app.allow_windows_style_options(false);
  // The last of a repeated flag wins: sbatch templates append user overrides.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  add_model_flags(app, o);
  add_optimization_flags(app, o);
  add_run_flags(app, o);
  if (!parse_command_line(app, argc, argv, "", "wireup-train --help")) return false;

  o.model = apply_shape_flags(preset(o.preset), o.shape_flags);
  o.checkpoint.max_steps = o.max_steps;             // the last step is always saved
  o.checkpoint.io_timeout_s = o.comm_init_timeout;  // a save stuck on the file system
  o.memory_checkpoint.io_timeout_s = o.comm_init_timeout;
  o.data.seed = o.seed;  // the data order's
  o.data.grad_accum = static_cast<std::uint64_t>(std::max<std::int64_t>(o.grad_accum, 1));
  return true;
}

std::pair<std::int64_t, std::int64_t> parse_profile_steps(const std::string& text) {
  // A whole number from 1 to 10^18 - 1; 0 for anything else.
  const auto step = [](const std::string& s) -> std::int64_t {
    if (s.empty() || s.size() > 18) return 0;
    std::int64_t v = 0;
    for (const char c : s) {
      if (c < '0' || c > '9') return 0;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  const auto colon = text.find(':');
  const std::int64_t a = colon == std::string::npos ? 0 : step(text.substr(0, colon));
  const std::int64_t b = colon == std::string::npos ? 0 : step(text.substr(colon + 1));
  if (a < 1 || b < a)
    throw InputError("--profile_steps " + text +
                     ": expected A:B, whole step numbers with 1 <= A <= B (e.g. 10:12)");
  return {a, b};
}

void check_train_options(const TrainOptions& o, std::int64_t world, std::int64_t local_world) {
  check_model_config(o.model);
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw InputError(what);
  };
  need(o.train_batch_size >= 1, "--train_batch_size must be at least 1");
  need(o.val_batch_size >= 1, "--val_batch_size must be at least 1");
  need(o.grad_accum >= 1, "--gradient_accumulation_steps must be at least 1");
  need(o.max_steps >= 1, "--max_steps must be at least 1");
  need(o.lr > 0 && o.min_lr >= 0 && o.min_lr <= o.lr,
       "--lr must be positive, 0 <= --min_lr <= --lr");
  need(o.warmup_steps >= 0, "--warmup_steps must be >= 0");
  need(o.grad_clip >= 0, "--grad_clip must be >= 0");
  need(o.logging_freq >= 1, "--logging_freq must be at least 1");
  check_compute_choice(o.compute);
  for (const auto& [flag, v] : {std::pair{"--comm_timeout", o.comm_timeout},
                                std::pair{"--comm_init_timeout", o.comm_init_timeout}}) {
    char given[32];
    std::snprintf(given, sizeof given, "%g", v);
    need(std::isfinite(v) && v >= 1 && v <= 7 * 86400,
         std::string(flag) + " " + given + ": expected seconds from 1 to 604800 (a week)");
  }
  need(o.validation_freq >= 0 && o.validation_batches >= 1,
       "--validation_freq must be >= 0 and --validation_batches at least 1");
  if (o.peak_tflops)
    need(*o.peak_tflops > 0 && std::isfinite(*o.peak_tflops),
         "--peak_tflops " + format_number(*o.peak_tflops) +
             ": expected one rank's peak in TFLOP/s, a positive number (e.g. 989 for an H100 "
             "in bf16); leave it out to measure it");
  check_checkpoint_flags(o.checkpoint, o.memory_checkpoint, o.resume_from_checkpoint);
  check_data_flags(o.data, o.synthetic_data);
  check_dpo_flags(o.dpo);
  check_observability_options(o);
  need(o.init_from_hf.empty() || o.init_from_checkpoint.empty(),
       "--init_from_hf and --init_from_checkpoint exclude each other: pass one of them");
  if (o.lora.rank != 0) {
    lora::validate(o.lora);
    check_lora_targets(o.model, o.lora.targets, "--lora_targets");
    need(!o.init_from_hf.empty() || !o.init_from_checkpoint.empty(),
         "--lora_rank trains adapters on a base model: pass --init_from_hf DIR or "
         "--init_from_checkpoint DIR (its weights, frozen)");
  }
  need(world >= 1 && local_world >= 1 && local_world <= world, "bad world layout");
  if (o.compute.sharding == Sharding::Hybrid)
    need(world % local_world == 0,
         "--sharding_strategy hybrid needs the same number of ranks on every node: world size " +
             std::to_string(world) + " is not a multiple of the local world size " +
             std::to_string(local_world));
}

}  // namespace wireup::train
