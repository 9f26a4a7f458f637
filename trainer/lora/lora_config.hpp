#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

// LoRA's settings, as the trainer's flags give them (no Torch). A LoRA adapter
// replaces a frozen projection W x by W x + scale() * B (A dropout(x)), with
// A [rank, in] and B [out, rank] trained (docs/lora.md).
namespace wireup::train::lora {

// The seven projections of a Llama-architecture decoder block (Llama, Qwen3,
// Qwen2.5), in this fixed order: every list of targets is sorted by it.
enum class Target { Q, K, V, O, Gate, Up, Down };
constexpr std::array<Target, 7> kAllTargets{Target::Q,    Target::K,  Target::V,   Target::O,
                                            Target::Gate, Target::Up, Target::Down};

// "q", "k", "v", "o", "gate", "up", "down": the --lora_targets spelling.
const char* short_name(Target t);
// "q_proj", ..., "down_proj": Hugging Face's module name (PEFT's target_modules).
const char* hf_module(Target t);
// The block's submodule holding the projection: "self_attn" (q, k, v, o) or "mlp".
const char* hf_parent(Target t);

// The most --lora_rank taken (a rank beyond the widest projection is pointless).
constexpr std::int64_t kMaxRank = 65536;

struct LoraConfig {
  std::int64_t rank = 0;  // --lora_rank: 0 is LoRA off
  // --lora_alpha: required with a rank (no default such as alpha = rank, which
  // tools disagree on: PEFT's is 8, others use 2 * rank); validate() refuses 0.
  double alpha = 0;
  double dropout = 0;  // --lora_dropout, on the adapter's input only
  // --lora_targets: sorted in Target order, no repeats; all seven unless given.
  std::vector<Target> targets{kAllTargets.begin(), kAllTargets.end()};

  bool enabled() const { return rank > 0; }
  // PEFT's lora_alpha / r (use_rslora's alpha / sqrt(r) is not supported).
  double scale() const { return alpha / static_cast<double>(rank); }
  // Whether projection t gets an adapter.
  bool adapts(Target t) const;
};

// --lora_targets: a comma list of short names or HF module names ("q" or
// "q_proj"), spaces around items ignored, repeats folded; returned in Target
// order. An empty list or item, or an unknown name, is an InputError naming
// --lora_targets, the item and the accepted names.
std::vector<Target> parse_targets(const std::string& csv);
// The short names joined by commas: "q,k,v,o,gate,up,down".
std::string targets_csv(const std::vector<Target>& targets);

// Checks an enabled config: 1 <= rank <= kMaxRank, alpha > 0 and finite,
// 0 <= dropout < 1, targets not empty, sorted and without repeats. Throws an
// InputError naming the flag (--lora_rank, --lora_alpha, --lora_dropout,
// --lora_targets) and the value.
void validate(const LoraConfig& c);

}  // namespace wireup::train::lora
