#include "config/model_config.hpp"

#include <map>

#include "wireup/error.hpp"

namespace wireup::train {
namespace {

const std::map<std::string, ModelConfig>& presets() {
  // context, vocab, hidden, layers, heads, kv_heads, intermediate, rope_theta
  static const std::map<std::string, ModelConfig> p = {
      {"llama2-7b", {4096, 32000, 4096, 32, 32, 32, 11008, 10000.0}},
      {"llama2-13b", {4096, 32000, 5120, 40, 40, 40, 13824, 10000.0}},
      {"llama2-70b", {4096, 32000, 8192, 80, 64, 8, 28672, 10000.0}},
      {"llama3-8b", {8192, 128256, 4096, 32, 32, 8, 14336, 500000.0}},
      {"llama3-70b", {8192, 128256, 8192, 80, 64, 8, 28672, 500000.0}},
      // CPU scale: the benchmark model of the issue, and smaller ones for tests.
      {"small", {256, 8000, 512, 4, 8, 4, 1376, 10000.0}},
      {"tiny", {64, 512, 64, 2, 4, 2, 176, 10000.0}},
      {"micro", {16, 64, 32, 2, 4, 2, 64, 10000.0}},
  };
  return p;
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto& [name, cfg] : presets()) out.push_back(name);
  return out;
}

ModelConfig preset(const std::string& name) {
  const auto it = presets().find(name);
  if (it != presets().end()) return it->second;
  std::string known;
  for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("--preset: unknown model " + name + " (known: " + known + ")");
}

void validate(const ModelConfig& m) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw InputError("model shape: " + what);
  };
  need(m.context >= 1, "--max_context_width must be at least 1");
  need(m.vocab >= 2, "--vocab_size must be at least 2");
  need(m.hidden >= 2 && m.layers >= 1 && m.heads >= 1 && m.kv_heads >= 1 && m.intermediate >= 1,
       "--hidden_width, --num_layers, --num_heads, --num_key_value_heads and "
       "--intermediate_size must be positive");
  need(m.hidden % m.heads == 0, "--hidden_width " + std::to_string(m.hidden) +
                                    " is not divisible by --num_heads " +
                                    std::to_string(m.heads));
  need(m.heads % m.kv_heads == 0, "--num_heads " + std::to_string(m.heads) +
                                      " is not divisible by --num_key_value_heads " +
                                      std::to_string(m.kv_heads));
  need(m.head_dim() % 2 == 0, "head dimension " + std::to_string(m.head_dim()) +
                                  " (hidden/heads) must be even for rotary embeddings");
  need(m.rope_theta > 0, "--rope_theta must be positive");
}

std::int64_t embedding_params(const ModelConfig& m) { return m.vocab * m.hidden; }

std::int64_t block_params(const ModelConfig& m) {
  const std::int64_t attn = m.hidden * m.hidden * 2 + 2 * m.kv_dim() * m.hidden;
  const std::int64_t ffn = 3 * m.hidden * m.intermediate;
  return attn + ffn + 2 * m.hidden;
}

std::int64_t head_params(const ModelConfig& m) { return m.hidden + m.vocab * m.hidden; }

std::int64_t total_params(const ModelConfig& m) {
  return embedding_params(m) + m.layers * block_params(m) + head_params(m);
}

double flops_per_token(const ModelConfig& m) {
  const double n = static_cast<double>(total_params(m) - embedding_params(m));
  return 6.0 * n + 12.0 * static_cast<double>(m.layers * m.hidden * m.context);
}

}  // namespace wireup::train
