#pragma once
#include <string>

#include "config/component_configs.hpp"
#include "lora/lora_config.hpp"
#include "preference/dpo_objective.hpp"
#include "wireup/data/batch_source.hpp"

namespace CLI {
class App;
}

// The flags of the components whose settings wireup-train binds directly
// (component_configs.hpp, the loader's BatchSourceConfig, LoRA's LoraConfig),
// each group declared and checked beside the others here; parse_train_options
// adds them, check_train_options calls the checks (InputError naming the flag).
namespace wireup::train {

// --checkpoint_dir, --checkpoint_freq, --keep_checkpoints, --stop_after_step,
// --start_fresh_if_unloadable, --async_checkpointing, --resume_from_checkpoint
// (into `resume`), --memory_checkpoint_freq, --memory_checkpoint_dir.
void add_checkpoint_flags(CLI::App& app, CheckpointPolicy& c, MemorySnapshotPolicy& m,
                          std::string& resume);
void check_checkpoint_flags(const CheckpointPolicy& c, const MemorySnapshotPolicy& m,
                            const std::string& resume);

// --dataset (--data), --epochs, --data_readahead, --synthetic_data,
// --document_masking.
void add_data_flags(CLI::App& app, data::BatchSourceConfig& d, bool& synthetic,
                    bool& document_masking);
void check_data_flags(const data::BatchSourceConfig& d, bool synthetic);

// --lora_rank, --lora_alpha, --lora_dropout, --lora_targets. The check of the
// targets against the model's family and of the base weights is
// check_train_options'.
void add_lora_flags(CLI::App& app, lora::LoraConfig& l);

// --dpo_beta, --dpo_loss, --dpo_label_smoothing, --dpo_sft_weight (a
// preference data set's objective); the check: dpo_settings_problem's.
void add_dpo_flags(CLI::App& app, preference::DpoSettings& d);
void check_dpo_flags(const preference::DpoSettings& d);

}  // namespace wireup::train
