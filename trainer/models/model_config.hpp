#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wireup::train {

// Llama 3.1's long-context RoPE ("rope_type": "llama3" in a Hugging Face
// config.json): rotary frequencies whose wavelength exceeds
// original_context / low_freq_factor are divided by `factor`, those below
// original_context / high_freq_factor are kept, the band between is blended.
struct RopeScaling {
  std::string type;  // "" (none) or "llama3"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  std::int64_t original_context = 8192;  // original_max_position_embeddings

  bool enabled() const { return !type.empty(); }
  bool operator==(const RopeScaling& o) const {
    return type == o.type &&
           (!enabled() ||
            (factor == o.factor && low_freq_factor == o.low_freq_factor &&
             high_freq_factor == o.high_freq_factor && original_context == o.original_context));
  }
  bool operator!=(const RopeScaling& o) const { return !(*this == o); }
};

// A model's family and shape. Every field can be overridden after a preset
// (family_registry.hpp: the families, their presets, the shape's checks).
struct ModelConfig {
  std::string family = "llama";      // --model_family: the ModelFamily and ModelSpec
  std::int64_t context = 256;        // --max_context_width
  std::int64_t vocab = 8000;         // --vocab_size
  std::int64_t hidden = 512;         // --hidden_width
  std::int64_t layers = 4;           // --num_layers
  std::int64_t heads = 8;            // --num_heads
  std::int64_t kv_heads = 4;         // --num_key_value_heads
  std::int64_t intermediate = 1376;  // --intermediate_size
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;
  RopeScaling rope_scaling;        // --rope_scaling
  bool tied = false;               // --tie_word_embeddings: the output projection is the embedding
  std::int64_t bos_token_id = -1;  // for the exported config.json; -1: unknown
  std::int64_t eos_token_id = -1;
  std::int64_t head_width = 0;  // --head_dim (HF head_dim); 0: hidden / heads

  std::int64_t head_dim() const { return head_width > 0 ? head_width : hidden / heads; }
  std::int64_t q_dim() const { return heads * head_dim(); }
  std::int64_t kv_dim() const { return kv_heads * head_dim(); }
};

// The shape flags a user gave (--max_context_width, --hidden_width, ...,
// --rope_theta, --rope_scaling, --tie_word_embeddings): each one set overrides
// the base's value, the base a preset or a Hugging Face config.json.
struct ShapeFlags {
  std::optional<std::int64_t> context, vocab, hidden, layers, heads, kv_heads, intermediate,
      head_dim;
  std::string family;        // not empty: set
  double rope_theta = 0;     // > 0: set
  std::string rope_scaling;  // not empty: set
  int tie = -1;              // 0 or 1: set
};
// "none", or "llama3:FACTOR,LOW,HIGH,ORIGINAL_CONTEXT" (the --rope_scaling
// flag; also how logs show it). Parsing throws InputError naming the text.
std::string rope_scaling_str(const RopeScaling& r);
RopeScaling parse_rope_scaling(const std::string& text);

// The rotary inverse frequencies, head_dim/2 of them, in double:
// theta^(-2i/head_dim), then Llama 3.1's scaling when enabled (Hugging Face's
// _compute_llama3_parameters). The one source of the rotary tables.
std::vector<double> rope_inv_freq(const ModelConfig& m);

}  // namespace wireup::train
