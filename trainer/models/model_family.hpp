#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "lora/lora_config.hpp"
#include "models/model_config.hpp"

// What a model family is, as plain facts (no LibTorch): its presets, the
// parameters of one block, and its Hugging Face config.json. Its computation is
// the ModelSpec of the same folder (model_spec.hpp). The flags, the checks, the
// counts and config.json ask family_registry.hpp, never a family by name.
namespace wireup::train {

struct ModelFamily {
  const char* name;     // ModelConfig::family and --model_family: "llama"
  const char* display;  // in messages: "Llama"
  // Named shapes (--preset), each of this family.
  std::vector<std::pair<std::string, ModelConfig>> presets;
  bool free_head_dim;  // head_dim may differ from hidden / heads
  // The parameters of one decoder block (norms, attention, feed-forward).
  std::int64_t (*block_params)(const ModelConfig& m);
  // The projections LoRA may adapt (--lora_targets, a PEFT adapter's
  // target_modules), in lora::Target order.
  std::vector<lora::Target> lora_targets;

  // config.json: its "model_type", "architectures" entry and "hidden_act".
  const char* hf_model_type;
  const char* hf_architecture;
  const char* hf_activation;
  // The family's own fields, added to the ones every family writes
  // (hf/hf_config.cpp's config_json).
  void (*write_hf_fields)(const ModelConfig& m, nlohmann::json& config);
  // What of config.json's bias and attention-window fields this family cannot
  // represent, one reason each; `model` names it in them ("wireup's Llama").
  void (*unsupported_hf_fields)(const nlohmann::json& config, const std::string& model,
                                std::vector<std::string>& out);
};

}  // namespace wireup::train
