#pragma once
#include <filesystem>
#include <optional>
#include <string>

#include "checkpoint/adapter_meta.hpp"
#include "comm/comm.hpp"
#include "comm/world_layout.hpp"
#include "config/train_options.hpp"
#include "models/model_config.hpp"
#include "models/sharded_model.hpp"

// The weights `wireup-train eval` and `wireup-train generate` run: a Hugging
// Face directory (--init_from_hf, with --lora_adapter's adapter) or a wireup
// checkpoint (--resume_from_checkpoint; a LoRA one on its base), their shapes
// read before anything is built; and the weights a training run starts from.
namespace wireup::train {

struct Weights {
  ModelConfig model;
  std::filesystem::path hf_dir;    // --init_from_hf
  std::filesystem::path step_dir;  // --resume_from_checkpoint, resolved to one step
  // LoRA: the adapter added to the base of hf_dir: --lora_adapter's PEFT
  // directory, or a LoRA checkpoint's step directory (hf_dir is its base).
  std::filesystem::path lora_adapter, lora_step_dir;
  std::string source;  // the file the shapes come from
  // The chat template the weights name: a checkpoint's (its data set's), or
  // the one of the HF directory's tokenizer_config.json when its text is a
  // published template's; "" when none. `chat_template_source` says which.
  std::string chat_template, chat_template_source;
  std::string describe() const {
    if (!lora_step_dir.empty()) return "checkpoint:" + lora_step_dir.string();
    const std::string adapter = lora_adapter.empty() ? "" : " lora:" + lora_adapter.string();
    return hf_dir.empty() ? "checkpoint:" + step_dir.string() : "hf:" + hf_dir.string() + adapter;
  }
};

// Exactly one of the first two is non-empty; `lora_adapter` goes with
// init_from_hf. The shapes from config.json or the step's metadata.json (a
// checkpoint directory: its newest complete step; a LoRA checkpoint: its
// base's config.json, the base checked against the fingerprint it records);
// InputError naming the flag for a missing directory or checkpoint.
Weights find_weights(const std::string& init_from_hf, const std::string& resume_from_checkpoint,
                     const std::string& lora_adapter = "");
// The weights of a wireup checkpoint (DIR or its newest complete step; `flag`
// names it in errors); a LoRA checkpoint's are its adapters on its base (a
// Hugging Face directory or a full model's checkpoint).
Weights checkpoint_weights(const std::string& dir, const std::string& flag);
// A training run's model shape, decided here once. parse_train_options sets
// o.model to --preset's shape (the default one's when none is given) with the
// shape flags over it. Without --preset, initial weights decide instead:
// --init_from_hf DIR's config.json (sizes, rope_theta and rope_scaling, tied
// embeddings, RMSNorm eps, bos and eos ids) or --init_from_checkpoint's
// metadata (a LoRA checkpoint's: its base's), with the context of
// --max_context_width (else the default preset's) and the shape flags over
// it; o.preset then names the source ("init_from_hf", "init_from_checkpoint").
// The load refuses weights that disagree with a shape flag, naming both
// values. InputError naming the file when it cannot be read.
void resolve_train_shape(TrainOptions& o);

// Sets every unit of the family's (model.base_units()) from the weights
// (load_hf_into, or the Checkpointer's load of the parameters alone, its
// AdamW moments unread), a LoRA adapter's deltas added.
void load_weights(ShardedModel& model, const Weights& weights, const CommGroups& groups,
                  const WorldLayout& w);

// The weights a training run starts from: --init_from_hf's or
// --init_from_checkpoint's (neither: nothing is loaded), into the family's
// units; LoRA's adapters are left as they are.
void load_start_weights(ShardedModel& model, const TrainOptions& o, const CommGroups& groups,
                        const WorldLayout& w);
// A LoRA run's adapters and base as its checkpoints record them (the base's
// absolute path and fingerprint), and its [lora] line on rank 0; nullopt
// without LoRA.
std::optional<AdapterMeta> lora_identity(const TrainOptions& o, const WorldLayout& w,
                                         ShardedModel& model);

}  // namespace wireup::train
