#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lora/lora_config.hpp"

// Hugging Face PEFT's adapter directory, as PEFT saves a LoRA adapter of a
// *ForCausalLM (Llama, Qwen3, Qwen2.5): DIR/adapter_config.json and
// DIR/adapter_model.safetensors. Text and names only (no Torch); every error is
// an InputError naming the file or tensor and what was expected (docs/lora.md).
namespace wireup::train::lora {

// The most bytes of adapter_config.json read, and the JSON shape allowed
// before it is parsed (PEFT writes about 1 KB, 2 levels deep).
constexpr std::uint64_t kMaxAdapterConfigBytes = 1ull << 20;
constexpr std::size_t kMaxAdapterConfigDepth = 16;
constexpr std::uint64_t kMaxAdapterConfigValues = 1ull << 16;

// adapter_config.json's text for a LoRA adapter of `c` (PEFT's keys, sorted as
// PEFT writes them): peft_type "LORA", task_type "CAUSAL_LM", r, lora_alpha,
// lora_dropout, target_modules (HF module names in Target order), bias "none",
// fan_in_fan_out, use_rslora, use_dora false, inference_mode true,
// modules_to_save and layers_to_transform null, rank_pattern and alpha_pattern
// {}, init_lora_weights true, base_model_name_or_path as given.
std::string adapter_config_json(const LoraConfig& c, const std::string& base_model_name_or_path);

struct PeftAdapterConfig {
  LoraConfig lora;
  std::string base_model_name_or_path;  // "" when absent or null
};

// Parses adapter_config.json's text; `where` names the file in errors.
// Accepted: a LoRA adapter of the seven projections, one rank and alpha for
// all, PEFT's plain scaling. Refused, naming the key: peft_type not "LORA";
// task_type not "CAUSAL_LM" (absent or null is fine); r not an integer in
// 1..kMaxRank; lora_alpha missing or not a number > 0; lora_dropout outside
// [0, 1); target_modules missing, a string (a regex: a list is expected), empty,
// or naming another module ("lm_head", "embed_tokens"); use_dora, use_rslora,
// fan_in_fan_out or lora_bias true; bias other than "none"; modules_to_save,
// exclude_modules, trainable_token_indices or target_parameters non-empty;
// layers_to_transform, layers_pattern or layer_replication non-null;
// rank_pattern or alpha_pattern non-empty. Missing optional keys take PEFT's
// defaults; other keys are ignored (PEFT adds fields across versions).
PeftAdapterConfig parse_adapter_config(const std::string& json_text, const std::string& where);

// DIR/adapter_config.json read (through wireup_file_io: a missing file, a
// directory or a FIFO is an InputError naming it) and parsed.
PeftAdapterConfig read_adapter_config(const std::string& adapter_dir);

// PEFT's tensor names in adapter_model.safetensors (the adapter's own name
// dropped): base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight
// ([rank, in]) and ...lora_B.weight ([out, rank]).
enum class Matrix { A, B };
std::string peft_tensor_name(std::int64_t layer, Target t, Matrix m);

struct PeftTensorId {
  std::int64_t layer = 0;
  Target target = Target::Q;
  Matrix matrix = Matrix::A;
  bool operator==(const PeftTensorId&) const = default;
};
// The inverse of peft_tensor_name: std::nullopt for any other name (a wrong
// parent such as mlp.q_proj, an adapter name left in, a layer with a sign or
// leading zero or beyond 2^31); the caller refuses it naming the tensor.
std::optional<PeftTensorId> parse_peft_tensor_name(const std::string& name);

// A projection's input and output widths.
struct ProjectionDims {
  std::int64_t in = 0, out = 0;
};
// For a block of these widths: q [hidden -> q_dim], k and v [hidden -> kv_dim],
// o [q_dim -> hidden], gate and up [hidden -> intermediate], down
// [intermediate -> hidden]. q_dim = heads * head_dim, kv_dim = kv_heads * head_dim.
ProjectionDims projection_dims(Target t, std::int64_t hidden, std::int64_t q_dim,
                               std::int64_t kv_dim, std::int64_t intermediate);

// The base model an adapter is read against.
struct BaseShape {
  std::int64_t layers = 0, hidden = 0, q_dim = 0, kv_dim = 0, intermediate = 0;
};

// A tensor of a safetensors header: its name and shape.
struct TensorShape {
  std::string name;
  std::vector<std::int64_t> shape;
};

// A tensor an adapter of this config holds: id, PEFT name, shape
// (A [rank, in], B [out, rank]).
struct AdapterTensor {
  PeftTensorId id;
  std::string name;
  std::vector<std::int64_t> shape;
};

// Checks adapter_model.safetensors' tensors (`where` names the file) against
// the config and the base: returns the tensors expected, for layer 0..layers-1,
// each target in Target order, A then B. Throws an InputError naming the first
// offending tensor: a name not of PEFT's form; one given twice; a layer >=
// base.layers; a target not in target_modules; a shape that disagrees
// (expected and found); then the first expected tensor that is missing.
std::vector<AdapterTensor> check_adapter_tensors(const std::vector<TensorShape>& tensors,
                                                 const LoraConfig& c, const BaseShape& base,
                                                 const std::string& where);

}  // namespace wireup::train::lora
