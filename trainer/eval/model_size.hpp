#pragma once
#include <cstdint>
#include <string>

#include "models/model_config.hpp"

// A model's shapes read from a file (config.json, a checkpoint's metadata.json)
// checked before anything of that size is allocated: each field within a sane
// bound, and the parameters' memory within this machine's. No LibTorch.
namespace wireup::train {

// How the file names the shape fields (its keys), for the error messages.
struct ModelFieldNames {
  const char* hidden;
  const char* intermediate;
  const char* layers;
  const char* heads;
  const char* kv_heads;
  const char* vocab;
};
extern const ModelFieldNames kHfConfigFields;    // hidden_size, num_hidden_layers, ...
extern const ModelFieldNames kCheckpointFields;  // model.hidden, model.layers, ...

// The bounds (well above Llama 3.1 405B: 126 layers, hidden 16384,
// intermediate 53248, vocabulary 128256).
constexpr std::int64_t kMaxLayers = 4096;
constexpr std::int64_t kMaxHidden = 1 << 18;
constexpr std::int64_t kMaxIntermediate = 1 << 20;
constexpr std::int64_t kMaxVocab = 1 << 24;

// Throws InputError starting with `name` that names the field: one outside
// its bound, or (when the fp32 parameter shard, 4 bytes per parameter over
// `world` ranks, passes `memory_bytes`: eval and generate keep no gradient)
// the fields that make the model that large.
void check_model_size(const ModelConfig& m, const std::string& name, const ModelFieldNames& f,
                      int world, std::uint64_t memory_bytes);

// The shapes of a Hugging Face Llama config.json (`name` starts every error):
// hidden_size, intermediate_size, num_hidden_layers, num_attention_heads,
// num_key_value_heads (default: the heads), vocab_size, rope_theta (default
// 10000), rms_norm_eps (default 1e-6), and rope_scaling, tie_word_embeddings,
// bos/eos ids (hf::read_model_extras). Everything else is checked when the
// weights load (hf::check_config).
ModelConfig model_config_from_hf_config(const std::string& text, const std::string& name);

// This machine's physical memory in bytes, or the process's address-space
// cap (RLIMIT_AS, ulimit -v) when that is lower.
std::uint64_t physical_memory_bytes();

}  // namespace wireup::train
