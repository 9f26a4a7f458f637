#pragma once
#include <optional>
#include <string>

#include "checkpoint/adapter_meta.hpp"
#include "checkpoint/dpo_meta.hpp"
#include "models/model_config.hpp"

// What a resumed run must find unchanged in the state it resumes from, and
// the one description of it that both kinds of saved state record and check:
// a durable checkpoint (metadata.json's "model" and "lora" objects) and a
// memory snapshot (its manifest's identity line). No Torch.
namespace wireup::train {

struct RunIdentity {
  // The family and shape: dims, layers, heads, kv heads, vocab, the head
  // split (head_dim), tying, rope scaling (and rope_theta, norm_eps,
  // context, the token ids: recorded, not compared).
  ModelConfig model;
  // A LoRA run's adapters (rank, alpha, dropout, targets) and the base they
  // adapt (its path and base_fingerprint); nullopt: a full model.
  std::optional<AdapterMeta> lora;
  // A DPO run's settings and reference; nullopt: not DPO.
  std::optional<DpoMeta> dpo;
};

// The identity as one line of JSON, {"dpo": ..., "lora": ..., "model":
// {...}}: "model" is metadata.json's model object (without its "preset"),
// "lora" and "dpo" its objects or null (a line without "dpo": not DPO). Non-ASCII escaped, so the
// line is plain ASCII.
std::string to_json(const RunIdentity& id);
// Strict, bounded (at most kMaxIdentityJsonBytes, shallow JSON); InputError
// starting with `name` otherwise.
constexpr std::size_t kMaxIdentityJsonBytes = 64 * 1024;
RunIdentity run_identity_from_json(const std::string& text, const std::string& name);

// Why state saved with `saved` cannot be resumed by a run with `run`, naming
// the field and both values; "" when it can. The family ("saved from a qwen3
// model, this run is llama"), the shape ("saved from a different model shape:
// layers 2, this run 4"), the rope scaling ("saved with --rope_scaling A, this
// run has B"), the adapters (adapter_mismatch), DPO's settings and
// reference (dpo_mismatch).
std::string identity_mismatch(const RunIdentity& saved, const RunIdentity& run);

}  // namespace wireup::train
