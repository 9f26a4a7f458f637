#pragma once
#include <optional>
#include <string>

#include "lora/lora_config.hpp"

// What a LoRA run's checkpoint records besides its adapters' tensors: their
// settings and the base they adapt, which a resume must load again and find
// unchanged. No Torch.
namespace wireup::train {

struct AdapterMeta {
  lora::LoraConfig lora;  // rank, alpha, dropout, targets
  // The base: a Hugging Face directory (--init_from_hf) or a full model's
  // checkpoint step directory (--init_from_checkpoint), absolute.
  std::string base;
  // Its SHA-256 identity (hf_import.hpp: base_fingerprint).
  std::string base_fingerprint;
};

// metadata.json's "lora" object, and back (`name`: the file, for errors).
std::string adapter_meta_json(const AdapterMeta& a);
AdapterMeta adapter_meta_from_json(const std::string& json_text, const std::string& name);

// Why a checkpoint with `saved` (nullopt: a full model's) cannot be resumed by
// a run with `run` (nullopt: a full fine-tune), naming both sides; "" when it can.
// The base must have the same fingerprint, the adapters the same rank, alpha
// and targets (dropout may change).
std::string adapter_mismatch(const std::optional<AdapterMeta>& saved,
                             const std::optional<AdapterMeta>& run);

}  // namespace wireup::train
