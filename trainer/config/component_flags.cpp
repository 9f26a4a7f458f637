#include "config/component_flags.hpp"

#include <CLI/CLI.hpp>

#include "config/command_line.hpp"
#include "wireup/error.hpp"

namespace wireup::train {
namespace {

void need(bool ok, const std::string& what) {
  if (!ok) throw InputError(what);
}

}  // namespace

void add_checkpoint_flags(CLI::App& app, CheckpointPolicy& c, MemorySnapshotPolicy& m,
                          std::string& resume) {
  app.add_option("--checkpoint_freq", c.freq, "steps between checkpoints");
  app.add_option_function<std::string>(
      "--checkpoint_dir", [&c](const std::string& d) { c.dir = d; }, "where checkpoints go");
  app.add_option("--resume_from_checkpoint", resume,
                 "a step directory, or auto (newest complete one in --checkpoint_dir)");
  app.add_option("--memory_checkpoint_freq", m.freq,
                 "steps between memory snapshots (node memory + a replica on the next node; "
                 "0: off)");
  app.add_option("--memory_checkpoint_dir", m.dir,
                 "where memory snapshots go (default /dev/shm/wireup-$SLURM_JOB_ID)");
  app.add_option("--keep_checkpoints", c.keep, "newest complete checkpoints kept (0: all)");
  app.add_option("--stop_after_step", c.stop_after_step,
                 "checkpoint and exit after this step, as on SIGTERM (planned preemption)");
  app.add_flag("--start_fresh_if_unloadable", c.start_fresh_if_unloadable,
               "with --resume_from_checkpoint auto: train from step 1 when checkpoints exist but "
               "none loads (default: exit 2)");
  add_switch(app, "--async_checkpointing", c.async, "1: write checkpoints in the background");
}

void check_checkpoint_flags(const CheckpointPolicy& c, const MemorySnapshotPolicy& m,
                            const std::string& resume) {
  const bool automatic = resume == "auto" || resume == "latest";
  need(c.stop_after_step >= 0, "--stop_after_step must be >= 0");
  need(!c.start_fresh_if_unloadable || automatic,
       "--start_fresh_if_unloadable applies to --resume_from_checkpoint auto only");
  need(m.freq >= 0, "--memory_checkpoint_freq must be >= 0 (0: off)");
  need(m.dir.empty() || m.freq > 0, "--memory_checkpoint_dir needs --memory_checkpoint_freq");
  need(c.freq >= 0 && c.keep >= 0, "--checkpoint_freq and --keep_checkpoints must be >= 0");
  need(!c.dir.empty() || (c.freq == 0 && !automatic),
       "--checkpoint_freq and --resume_from_checkpoint auto need --checkpoint_dir");
}

void add_data_flags(CLI::App& app, data::BatchSourceConfig& d, bool& synthetic,
                    bool& document_masking) {
  app.add_option_function<std::int64_t>(
      "--epochs",
      [&d](std::int64_t v) {
        if (v < 0) throw InputError("--epochs must be >= 0");
        d.epochs = static_cast<std::uint64_t>(v);
      },
      "passes over the data (0: until max_steps)");
  app.add_option_function<std::string>(
      "--dataset,--data", [&d](const std::string& v) { d.dataset = v; },
      "manifest.json from wireup-prep (or its dir)");
  app.add_option_function<std::int64_t>(
      "--data_readahead",
      [&d](std::int64_t v) {
        if (v < 0 || v > 1024)
          throw InputError("--data_readahead " + std::to_string(v) +
                           ": expected 0 (off) to 1024 steps");
        d.readahead = static_cast<std::size_t>(v);
      },
      "steps of shard data to ask the kernel to fetch ahead (0: off; FSx/Lustre: ~2)");
  add_switch(app, "--document_masking", document_masking,
             "1: packed conversations (chat data sets) attend within themselves, positions "
             "from 0 each; 0: across the row")
      ->check(CLI::IsMember({0, 1}));
  app.add_flag("--synthetic_data", synthetic, "random tokens instead of a dataset");
}

void check_data_flags(const data::BatchSourceConfig& d, bool synthetic) {
  need(synthetic || !d.dataset.empty(),
       "no data: pass --dataset DIR (a wireup-prep output) or --synthetic_data");
  need(!synthetic || d.dataset.empty(),
       "--dataset and --synthetic_data exclude each other: pass one of them");
}

void add_lora_flags(CLI::App& app, lora::LoraConfig& l) {
  app.add_option("--lora_rank", l.rank,
                 "LoRA: train rank-R adapters on the frozen base's projections (0: off)");
  app.add_option("--lora_alpha", l.alpha, "LoRA: the adapters' scale is alpha / rank");
  app.add_option("--lora_dropout", l.dropout, "LoRA: dropout on the adapters' input");
  app.add_option_function<std::string>(
      "--lora_targets", [&l](const std::string& v) { l.targets = lora::parse_targets(v); },
      "LoRA: the projections adapted (default q,k,v,o,gate,up,down)");
}

void add_dpo_flags(CLI::App& app, preference::DpoSettings& d) {
  app.add_option("--dpo_beta", d.beta,
                 "DPO (a preference data set): the implicit reward's scale beta (default 0.1; "
                 "ipo: its tau)");
  app.add_option_function<std::string>(
      "--dpo_loss",
      [&d](const std::string& v) { d.loss = preference::parse_dpo_loss(v, "--dpo_loss"); },
      "DPO: the loss type, sigmoid (default), robust, hinge or ipo");
  app.add_option("--dpo_label_smoothing", d.label_smoothing,
                 "DPO: robust loss's label smoothing, in [0, 0.5)");
  app.add_option("--dpo_sft_weight", d.sft_weight,
                 "DPO: the weight of the chosen completions' NLL added to the loss (0: none)");
}

void check_dpo_flags(const preference::DpoSettings& d) {
  if (const std::string problem = preference::dpo_settings_problem(d); !problem.empty())
    throw InputError(problem);
}

}  // namespace wireup::train
