#pragma once
#include <filesystem>
#include <string>

#include "config/model_config.hpp"
#include "hf/hf_config.hpp"

namespace wireup::train {

class ShardedModel;

// Reads DIR/config.json and throws InputError (naming the file, every field
// wireup cannot represent and every field differing from `m`) unless it
// describes the same architecture as `m` (hf_config.hpp).
hf::ConfigFacts check_hf_config(const std::filesystem::path& dir, const ModelConfig& m);

// `--init_from_hf DIR`: sets every unit of `model` from a Hugging Face Llama
// checkpoint (config.json + model.safetensors, or a sharded one with
// model.safetensors.index.json; F32, BF16 or F16). Every rank reads the files.
void load_hf_into(ShardedModel& model, const std::string& dir);

// What identifies a base model a LoRA run adapts: SHA-256 (hex) of DIR's
// config.json and of its tensors' names, dtypes and shapes (the headers
// only: quick for any size; a re-quantised or re-shaped base differs).
std::string hf_base_fingerprint(const std::filesystem::path& dir);

}  // namespace wireup::train
