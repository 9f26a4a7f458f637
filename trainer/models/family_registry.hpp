#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "models/model_config.hpp"
#include "models/model_family.hpp"

// Every family the trainer knows (family_registry.cpp lists them: a new one is a
// line there), and what the rest of the trainer asks of a model's family:
// presets, the shape's checks, parameter and FLOP counts. Plain C++.
namespace wireup::train {

// Adds a family to the ones listed in family_registry.cpp, for a program that
// links one more (model_registry.hpp's register_model_spec calls it; a
// registration before main, as tests/trainer/test_family/ does). Registering
// the same family twice is a no-op; a family whose name, model_type or a
// preset's name is another's: std::logic_error (a programming error).
void register_family(const ModelFamily& family);

// The family named `name`; InputError naming it and the known ones.
const ModelFamily& model_family(const std::string& name);
const ModelFamily& model_family(const ModelConfig& m);
// The family whose config.json model_type is `model_type`; nullptr if none.
const ModelFamily* family_of_hf_model_type(const std::string& model_type);
std::vector<std::string> family_names();

// "llama2-7b", "llama3-8b", ..., "qwen3-8b", "qwen2.5-7b", "tiny", "small" (every
// family's, sorted). Throws InputError listing the known names.
ModelConfig preset(const std::string& name);
std::vector<std::string> preset_names();

// `base` with every flag in `f` applied (an unknown --model_family or a bad
// --rope_scaling: InputError).
ModelConfig apply_shape_flags(ModelConfig base, const ShapeFlags& f);

// Throws InputError naming the first inconsistency (an unknown family,
// hidden % heads, ...).
void check_model_config(const ModelConfig& m);

// InputError naming `what` (--lora_targets, an adapter's target_modules), the
// family and what it offers, when a target is not one of its lora_targets.
void check_lora_targets(const ModelFamily& f, const std::vector<lora::Target>& targets,
                        const std::string& what);
void check_lora_targets(const ModelConfig& m, const std::vector<lora::Target>& targets,
                        const std::string& what);

// Parameter counts, in the order the trainer lays out units.
std::int64_t embedding_params(const ModelConfig& m);
std::int64_t block_params(const ModelConfig& m);  // the family's
std::int64_t head_params(const ModelConfig& m);   // final norm + output (untied)
std::int64_t total_params(const ModelConfig& m);

// Training FLOPs per token: 6 * (N - N_embedding), the output projection
// counted (it is a GEMM whether tied or not), + 12 * L * H * head_dim * T
// (forward + backward, attention included; the PaLM/torchtitan count).
double flops_per_token(const ModelConfig& m);

}  // namespace wireup::train
