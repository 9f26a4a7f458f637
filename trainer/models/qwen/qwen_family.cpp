#include "models/qwen/qwen_family.hpp"

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "models/llama/llama_family.hpp"

namespace wireup::train::qwen {
namespace {

constexpr QwenBlock kQwen3{true, false}, kQwen2{false, true};

// Qwen3 (dense) and Qwen2.5, as their published config.json files: a
// 151936-id embedding (Qwen2.5 7B and up: 152064), rope_theta 10^6, RMSNorm
// eps 10^-6, <|endoftext|> and <|im_end|> as bos and eos; Qwen3's head width
// is 128 at every size.
ModelConfig qwen(ModelConfig m, std::int64_t head_width, bool tied) {
  m.head_width = head_width;
  m.tied = tied;
  m.norm_eps = 1e-6;
  m.bos_token_id = 151643;
  m.eos_token_id = 151645;
  return m;
}

std::int64_t block_params(const ModelConfig& m, QwenBlock b) {
  const std::int64_t qkv = m.q_dim() + 2 * m.kv_dim();
  return llama::decoder_block_params(m,
                                     (b.qkv_bias ? qkv : 0) + (b.qk_norm ? 2 * m.head_dim() : 0));
}
std::int64_t qwen3_block_params(const ModelConfig& m) { return block_params(m, kQwen3); }
std::int64_t qwen2_block_params(const ModelConfig& m) { return block_params(m, kQwen2); }

// Qwen3Config / Qwen2Config: full attention in every layer (the window fields
// say so); Qwen2's Q/K/V biases are implied by its model_type.
void write_window_fields(const ModelConfig& m, nlohmann::json& c) {
  c["use_sliding_window"] = false;
  c["sliding_window"] = nullptr;
  c["max_window_layers"] = m.layers;
}
void write_qwen3_fields(const ModelConfig& m, nlohmann::json& c) {
  write_window_fields(m, c);
  c["attention_bias"] = false;
}

void qwen3_unsupported(const nlohmann::json& c, const std::string& model,
                       std::vector<std::string>& out) {
  llama::decoder_unsupported_hf_fields(c, model, kQwen3.qkv_bias, true, out);
}
void qwen2_unsupported(const nlohmann::json& c, const std::string& model,
                       std::vector<std::string>& out) {
  llama::decoder_unsupported_hf_fields(c, model, kQwen2.qkv_bias, true, out);
}

}  // namespace

const ModelFamily& qwen3_family() {
  const auto shape = llama::decoder_shape;
  // context, vocab, hidden, layers, heads, kv_heads, intermediate, rope_theta
  static const ModelFamily family{
      "qwen3",
      "Qwen3",
      {
          {"qwen3-0.6b", qwen(shape(40960, 151936, 1024, 28, 16, 8, 3072, 1e6), 128, true)},
          {"qwen3-1.7b", qwen(shape(40960, 151936, 2048, 28, 16, 8, 6144, 1e6), 128, true)},
          {"qwen3-4b", qwen(shape(40960, 151936, 2560, 36, 32, 8, 9728, 1e6), 128, true)},
          {"qwen3-8b", qwen(shape(40960, 151936, 4096, 36, 32, 8, 12288, 1e6), 128, false)},
          {"qwen3-14b", qwen(shape(40960, 151936, 5120, 40, 40, 8, 17408, 1e6), 128, false)},
          {"qwen3-32b", qwen(shape(40960, 151936, 5120, 64, 64, 8, 25600, 1e6), 128, false)},
          // CPU scale: heads wider than hidden / heads, as Qwen3 0.6B's are.
          {"qwen3-tiny", qwen(shape(64, 512, 64, 2, 4, 2, 176, 1e6), 32, true)},
      },
      /*free_head_dim=*/true,
      qwen3_block_params,
      {lora::kAllTargets.begin(), lora::kAllTargets.end()},
      "qwen3",
      "Qwen3ForCausalLM",
      "silu",
      write_qwen3_fields,
      qwen3_unsupported,
  };
  return family;
}

const ModelFamily& qwen2_family() {
  const auto shape = llama::decoder_shape;
  static const ModelFamily family{
      "qwen2",
      "Qwen2.5",
      {
          {"qwen2.5-0.5b", qwen(shape(32768, 151936, 896, 24, 14, 2, 4864, 1e6), 0, true)},
          {"qwen2.5-1.5b", qwen(shape(32768, 151936, 1536, 28, 12, 2, 8960, 1e6), 0, true)},
          {"qwen2.5-3b", qwen(shape(32768, 151936, 2048, 36, 16, 2, 11008, 1e6), 0, true)},
          {"qwen2.5-7b", qwen(shape(32768, 152064, 3584, 28, 28, 4, 18944, 1e6), 0, false)},
          {"qwen2.5-tiny", qwen(shape(64, 512, 64, 2, 4, 2, 176, 1e6), 0, true)},
      },
      /*free_head_dim=*/false,
      qwen2_block_params,
      {lora::kAllTargets.begin(), lora::kAllTargets.end()},
      "qwen2",
      "Qwen2ForCausalLM",
      "silu",
      write_window_fields,
      qwen2_unsupported,
  };
  return family;
}

QwenBlock qwen_block(const ModelConfig& m) {
  if (m.family == qwen3_family().name) return kQwen3;
  if (m.family == qwen2_family().name) return kQwen2;
  throw std::logic_error("qwen_block: family " + m.family + " is not a Qwen");
}

}  // namespace wireup::train::qwen
