#include "models/llama/llama_family.hpp"

#include <nlohmann/json.hpp>

namespace wireup::train::llama {
namespace {

// Meta's token ids: Llama 2's SentencePiece <s> </s>, Llama 3's
// <|begin_of_text|> <|end_of_text|>.
ModelConfig with_tokens(ModelConfig m, std::int64_t bos, std::int64_t eos) {
  m.bos_token_id = bos;
  m.eos_token_id = eos;
  return m;
}

// Llama 3.1 and 3.2: 131072 positions from an 8192-token pretraining context
// through the llama3 RoPE scaling (factor 8 for 3.1, 32 for 3.2); 3.2 ties the
// output projection to the embedding.
ModelConfig llama31(ModelConfig m, double factor, bool tied) {
  m.rope_scaling = {"llama3", factor, 1.0, 4.0, 8192};
  m.tied = tied;
  return with_tokens(m, 128000, 128001);
}

std::int64_t llama_block_params(const ModelConfig& m) { return decoder_block_params(m, 0); }

// LlamaConfig's fields beyond the common ones: no biases, no tensor-parallel split.
void write_llama_fields(const ModelConfig& /*m*/, nlohmann::json& c) {
  c["attention_bias"] = false;
  c["mlp_bias"] = false;
  c["pretraining_tp"] = 1;
}

void llama_unsupported_fields(const nlohmann::json& c, const std::string& model,
                              std::vector<std::string>& out) {
  decoder_unsupported_hf_fields(c, model, false, false, out);
}

bool truthy(const nlohmann::json& c, const char* key) {
  return c.contains(key) && c[key].is_boolean() && c[key].get<bool>();
}

}  // namespace

std::int64_t decoder_block_params(const ModelConfig& m, std::int64_t extra_attention) {
  const std::int64_t qkv = m.q_dim() + 2 * m.kv_dim();
  const std::int64_t attn = qkv * m.hidden + m.hidden * m.q_dim() + extra_attention;
  const std::int64_t ffn = 3 * m.hidden * m.intermediate;
  return attn + ffn + 2 * m.hidden;
}

ModelConfig decoder_shape(std::int64_t context, std::int64_t vocab, std::int64_t hidden,
                          std::int64_t layers, std::int64_t heads, std::int64_t kv_heads,
                          std::int64_t intermediate, double rope_theta) {
  ModelConfig m;
  m.context = context;
  m.vocab = vocab;
  m.hidden = hidden;
  m.layers = layers;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.intermediate = intermediate;
  m.rope_theta = rope_theta;
  return m;
}

void decoder_unsupported_hf_fields(const nlohmann::json& c, const std::string& model,
                                   bool attention_bias, bool names_unused_window,
                                   std::vector<std::string>& out) {
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (truthy(c, key) && !(attention_bias && key == std::string("attention_bias")))
      out.push_back(std::string(key) + "=true (" + model + " has no such biases)");
  if (truthy(c, "use_sliding_window") ||
      (!names_unused_window && c.contains("sliding_window") && !c["sliding_window"].is_null()))
    out.push_back("sliding_window=" + c.value("sliding_window", nlohmann::json(nullptr)).dump() +
                  " (wireup's attention is full causal)");
}

const ModelFamily& llama_family() {
  const auto shape = decoder_shape;
  // context, vocab, hidden, layers, heads, kv_heads, intermediate, rope_theta
  static const ModelFamily family{
      "llama",
      "Llama",
      {
          {"llama2-7b", with_tokens(shape(4096, 32000, 4096, 32, 32, 32, 11008, 10000.0), 1, 2)},
          {"llama2-13b", with_tokens(shape(4096, 32000, 5120, 40, 40, 40, 13824, 10000.0), 1, 2)},
          {"llama2-70b", with_tokens(shape(4096, 32000, 8192, 80, 64, 8, 28672, 10000.0), 1, 2)},
          {"llama3-8b",
           with_tokens(shape(8192, 128256, 4096, 32, 32, 8, 14336, 500000.0), 128000, 128001)},
          {"llama3-70b",
           with_tokens(shape(8192, 128256, 8192, 80, 64, 8, 28672, 500000.0), 128000, 128001)},
          {"llama3.1-8b",
           llama31(shape(131072, 128256, 4096, 32, 32, 8, 14336, 500000.0), 8.0, false)},
          {"llama3.1-70b",
           llama31(shape(131072, 128256, 8192, 80, 64, 8, 28672, 500000.0), 8.0, false)},
          {"llama3.2-1b",
           llama31(shape(131072, 128256, 2048, 16, 32, 8, 8192, 500000.0), 32.0, true)},
          {"llama3.2-3b",
           llama31(shape(131072, 128256, 3072, 28, 24, 8, 8192, 500000.0), 32.0, true)},
          // CPU scale: the benchmark model, and smaller ones for tests.
          {"small", shape(256, 8000, 512, 4, 8, 4, 1376, 10000.0)},
          {"tiny", shape(64, 512, 64, 2, 4, 2, 176, 10000.0)},
          {"micro", shape(16, 64, 32, 2, 4, 2, 64, 10000.0)},
      },
      /*free_head_dim=*/false,
      llama_block_params,
      {lora::kAllTargets.begin(), lora::kAllTargets.end()},
      "llama",
      "LlamaForCausalLM",
      "silu",
      write_llama_fields,
      llama_unsupported_fields,
  };
  return family;
}

}  // namespace wireup::train::llama
