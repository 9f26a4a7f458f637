#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "checkpoint/checkpoint_format.hpp"
#include "lora/lora_config.hpp"
#include "models/model_config.hpp"

// LoRA adapters as Hugging Face PEFT holds them (lora/peft_adapter.hpp: the
// format's rules), and as a LoRA checkpoint holds them: read, written, and
// added to a base's weights (docs/lora.md).
namespace wireup::train {

// A LoRA adapter in Hugging Face's layout: for each adapted weight of the
// base, by its HF name ("model.layers.N.self_attn.q_proj.weight"), A
// [rank, in] and B [out, rank], fp32 on the host.
struct HfAdapter {
  lora::LoraConfig lora;
  std::string base;  // base_model_name_or_path
  struct Pair {
    at::Tensor a, b;
  };
  std::map<std::string, Pair> weights;
  // scale * B A for an HF weight (fp32, the weight's shape); undefined when
  // the weight is not adapted.
  at::Tensor delta(const std::string& hf_weight) const;
};

// "model.layers.N.self_attn.q_proj.weight": the base weight target t of layer N adapts.
std::string adapted_weight_name(std::int64_t layer, lora::Target t);

// DIR/adapter_config.json and DIR/adapter_model.safetensors, made by
// wireup-train export or by PEFT, for a base of shape `m`. InputError naming
// the file or tensor: an unsupported field (use_dora, use_rslora, bias
// training, modules the base lacks), a tensor of another rank or shape than
// the base's, a missing or unexpected tensor, an adapter_model.bin.
HfAdapter read_peft_adapter(const std::filesystem::path& dir, const ModelConfig& m);

// A LoRA checkpoint's adapters (its units "lora0"...) in Hugging Face's
// layout; InputError naming metadata.json when its units are not the
// adapters its "lora" settings describe.
HfAdapter checkpoint_adapter(const std::filesystem::path& step_dir, const CheckpointMeta& meta);

// Writes `a` as PEFT saves an adapter: OUT/adapter_config.json and
// OUT/adapter_model.safetensors (dtype "float32" or "bfloat16"), each
// appearing whole. Returns the safetensors file's bytes.
class ShardedModel;
// Adds `a`'s deltas to the family's units of `model` (each rank its shards),
// through the family's HF adapter: for weights loaded another way than from
// Hugging Face files (a checkpoint).
void add_adapter_into(ShardedModel& model, const HfAdapter& a);

std::uint64_t write_peft_adapter(const HfAdapter& a, const ModelConfig& m,
                                 const std::filesystem::path& out, const std::string& dtype);

}  // namespace wireup::train
