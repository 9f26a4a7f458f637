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

// A model's family and shape: Llama 2 / 3 / 3.1, Qwen3, Qwen2.5. Every field
// can be overridden after a preset.
struct ModelConfig {
  std::string family = "llama";      // --model_family: the ModelSpec (llama, qwen3, qwen2)
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

// What a family's shape is made of, beyond the Llama's: the facts the
// parameter count, the checks and the Hugging Face config.json need, plain
// data (the computation is the family's folder under trainer/models/).
struct FamilyTraits {
  const char* name;             // ModelConfig::family, the ModelSpec's name
  const char* display;          // in messages: "Llama", "Qwen3", "Qwen2.5"
  const char* hf_model_type;    // config.json "model_type"
  const char* hf_architecture;  // config.json "architectures"
  bool qk_norm;                 // per-head RMSNorm of Q and K before RoPE (Qwen3)
  bool qkv_bias;                // biases on the Q, K and V projections (Qwen2.5)
  bool free_head_dim;           // head_dim may differ from hidden / heads
};
// The family's traits; InputError naming `family` and the known ones.
const FamilyTraits& family_traits(const std::string& family);
// The family whose config.json model_type is `model_type`; nullptr if none.
const FamilyTraits* family_of_hf_model_type(const std::string& model_type);
std::vector<std::string> family_names();

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
// `base` with every flag in `f` applied (a bad --rope_scaling: InputError).
ModelConfig apply_shape_flags(ModelConfig base, const ShapeFlags& f);

// "llama2-7b", "llama3-8b", ..., "qwen3-8b", "qwen2.5-7b", "tiny", "small". Throws InputError
// listing the known names.
ModelConfig preset(const std::string& name);
std::vector<std::string> preset_names();

// Throws InputError naming the first inconsistency (hidden % heads, ...).
void check_model_config(const ModelConfig& m);

// "none", or "llama3:FACTOR,LOW,HIGH,ORIGINAL_CONTEXT" (the --rope_scaling
// flag; also how logs show it). Parsing throws InputError naming the text.
std::string rope_scaling_str(const RopeScaling& r);
RopeScaling parse_rope_scaling(const std::string& text);

// The rotary inverse frequencies, head_dim/2 of them, in double:
// theta^(-2i/head_dim), then Llama 3.1's scaling when enabled (Hugging Face's
// _compute_llama3_parameters). The one source of the rotary tables.
std::vector<double> rope_inv_freq(const ModelConfig& m);

// Parameter counts, in the order the trainer lays out units.
std::int64_t embedding_params(const ModelConfig& m);
std::int64_t block_params(const ModelConfig& m);
std::int64_t head_params(const ModelConfig& m);  // final norm + output (untied)
std::int64_t total_params(const ModelConfig& m);

// Training FLOPs per token: 6 * (N - N_embedding), the output projection
// counted (it is a GEMM whether tied or not), + 12 * L * H * head_dim * T
// (forward + backward, attention included; the PaLM/torchtitan count).
double flops_per_token(const ModelConfig& m);

}  // namespace wireup::train
