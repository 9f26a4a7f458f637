#pragma once
#include <optional>
#include <string>

#include "preference/dpo_objective.hpp"

// What a DPO run's checkpoint and memory snapshot record besides its
// tensors: the objective's settings and the reference the log-ratios are
// taken against, which a resume must find unchanged. No Torch.
namespace wireup::train {

struct DpoMeta {
  preference::DpoSettings settings;  // beta, loss type, label smoothing, sft weight
  // "adapters_off" (LoRA: the base, which the "lora" object names) or
  // "frozen_copy" (a copy of the start weights).
  std::string reference;
  // The frozen copy's start weights: "hf:DIR" or "checkpoint:DIR" (absolute),
  // or "seed:N" (the seed's random values); "" with adapters off.
  std::string reference_source;
  // DIR's SHA-256 identity (hf_import.hpp: base_fingerprint); "" for a seed.
  std::string reference_fingerprint;
};

// metadata.json's "dpo" object (and the identity line's), and back (`name`:
// the file, for errors).
std::string dpo_meta_json(const DpoMeta& d);
DpoMeta dpo_meta_from_json(const std::string& json_text, const std::string& name);

// Why state saved with `saved` (nullopt: not a DPO run's) cannot be resumed
// by a run with `run`, naming the setting and both values; "" when it can.
std::string dpo_mismatch(const std::optional<DpoMeta>& saved, const std::optional<DpoMeta>& run);

}  // namespace wireup::train
