#pragma once
#include <filesystem>
#include <string>

#include "hf/hf_config.hpp"
#include "models/model_config.hpp"

namespace wireup::train {

class ShardedModel;

// Reads DIR/config.json and throws InputError (naming the file, every field
// wireup cannot represent and every field differing from `m`) unless it
// describes the same architecture as `m` (hf_config.hpp).
hf::ConfigFacts check_hf_config(const std::filesystem::path& dir, const ModelConfig& m);

// `--init_from_hf DIR`: sets every unit of `model` from a Hugging Face Llama
// checkpoint (config.json + model.safetensors, or a sharded one with
// model.safetensors.index.json; F32, BF16 or F16). Every rank reads the files.
// `adapter`: a LoRA adapter's deltas (scale * B A) added to the weights it
// adapts as they are read (eval and generate with --lora_adapter).
struct HfAdapter;
void load_hf_into(ShardedModel& model, const std::string& dir, const HfAdapter* adapter = nullptr);

// What identifies a base model a LoRA run adapts, SHA-256 (hex): of a
// Hugging Face directory's config.json and of each tensor's name, dtype,
// shape and first 4 KiB of data (quick for any size: a few MB read; a
// re-quantised, re-shaped or retrained base differs); of a wireup step
// directory's metadata.json (which holds every chunk's SHA-256).
std::string base_fingerprint(const std::filesystem::path& dir);

}  // namespace wireup::train
