#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace wireup::train {

// Llama 2 / Llama 3 shapes. Every field can be overridden after a preset.
struct ModelConfig {
  std::int64_t context = 256;        // --max_context_width
  std::int64_t vocab = 8000;         // --vocab_size
  std::int64_t hidden = 512;         // --hidden_width
  std::int64_t layers = 4;           // --num_layers
  std::int64_t heads = 8;            // --num_heads
  std::int64_t kv_heads = 4;         // --num_key_value_heads
  std::int64_t intermediate = 1376;  // --intermediate_size
  double rope_theta = 10000.0;
  double norm_eps = 1e-5;

  std::int64_t head_dim() const { return hidden / heads; }
  std::int64_t kv_dim() const { return kv_heads * head_dim(); }
};

// "llama2-7b", "llama3-8b", ..., "tiny", "small". Throws InputError listing
// the known names.
ModelConfig preset(const std::string& name);
std::vector<std::string> preset_names();

// Throws InputError naming the first inconsistency (hidden % heads, ...).
void validate(const ModelConfig& m);

// Parameter counts, in the order the trainer lays out units.
std::int64_t embedding_params(const ModelConfig& m);
std::int64_t block_params(const ModelConfig& m);
std::int64_t head_params(const ModelConfig& m);  // final norm + output
std::int64_t total_params(const ModelConfig& m);

// Training FLOPs per token: 6 * (N - N_embedding) + 12 * L * H * head_dim * T
// (forward + backward, attention included; the PaLM/torchtitan count).
double flops_per_token(const ModelConfig& m);

}  // namespace wireup::train
