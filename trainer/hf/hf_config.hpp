#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/model_config.hpp"

// The Hugging Face side of export and import that is text, not tensors: the
// config.json of each family (LlamaForCausalLM, Qwen3ForCausalLM,
// Qwen2ForCausalLM), what of a config.json the family can represent, the byte-size flag and the
// split of the weights into shard files with their model.safetensors.index.json. Plain C++ (no
// LibTorch).
namespace wireup::train::hf {

// The most bytes of a config.json read (Llama 3.1's is under 1 KB), and its
// JSON's shape, checked before it is parsed (io::check_json_shape): nesting
// depth and value count (a parse tree under ~30 MB).
constexpr std::uint64_t kMaxConfigBytes = 4ull << 20;
constexpr std::size_t kMaxConfigDepth = 32;
constexpr std::uint64_t kMaxConfigValues = 1ull << 18;

// config.json's text checked for nesting depth and value count before any
// parse (io::check_json_shape); InputError naming the file and the bound.
void check_config_text(const std::string& text, const std::string& name);

// config.json for `m`: its family's architecture and model_type, head_dim, rope_theta, rope_scaling
// (a llama3 dict or null), tie_word_embeddings, bos/eos token ids (null when unknown),
// max_position_embeddings (= --max_context_width), torch_dtype.
std::string config_json(const ModelConfig& m, const std::string& torch_dtype);

// What an accepted config.json says beyond the model flags.
struct ConfigFacts {
  bool tied = false;  // tie_word_embeddings (HF's default for Llama: false)
  std::optional<std::int64_t> max_position_embeddings;
};

// Checks a config.json's text against `m`. Throws one InputError, starting
// with `name`, that lists every field the model's family cannot represent
// (rope_scaling of another type, biases it lacks, a head_dim other than the
// model's, sliding windows in use, quantization, other activations, another
// model_type: qwen3_moe and other mixtures of experts are named as such) and
// every field that differs from the model flags.
ConfigFacts check_config(const std::string& text, const std::string& name, const ModelConfig& m);

// Fills what a config.json says beyond the shapes into `m`: the family (from
// model_type, when a known one), head_dim (families whose heads may be wider
// than hidden/heads), rope_scaling (llama3 or none), tie_word_embeddings,
// bos/eos token ids. A value wireup
// cannot represent is left as it was: check_config then names it.
void read_model_extras(const std::string& text, ModelConfig& m);

// "5GB", "200MB", "1000000", "64KiB": bytes (decimal units as Hugging Face's
// max_shard_size, binary with "i"). InputError naming `flag` otherwise.
std::uint64_t parse_byte_size(const std::string& text, const std::string& flag);

// Tensors (their byte sizes, in file order) -> shard index of each: a new
// shard starts when the next tensor would take the current one past
// `max_bytes` (a tensor larger than that gets a shard of its own), as
// transformers' save_pretrained splits.
std::vector<std::size_t> plan_shards(const std::vector<std::uint64_t>& tensor_bytes,
                                     std::uint64_t max_bytes);
// "model-00002-of-00003.safetensors" (index 1 of 3).
std::string shard_file_name(std::size_t index, std::size_t count);
// model.safetensors.index.json: {"metadata": {"total_size": ...}, "weight_map": {...}}.
std::string index_json(const std::vector<std::string>& names, const std::vector<std::string>& files,
                       std::uint64_t total_size);

}  // namespace wireup::train::hf
