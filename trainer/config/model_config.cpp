#include "config/model_config.hpp"

#include <utility>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "wireup/error.hpp"

namespace wireup::train {
namespace {

ModelConfig shape(std::int64_t context, std::int64_t vocab, std::int64_t hidden,
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

const std::map<std::string, ModelConfig>& presets() {
  // context, vocab, hidden, layers, heads, kv_heads, intermediate, rope_theta
  static const std::map<std::string, ModelConfig> p = {
      {"llama2-7b", with_tokens(shape(4096, 32000, 4096, 32, 32, 32, 11008, 10000.0), 1, 2)},
      {"llama2-13b", with_tokens(shape(4096, 32000, 5120, 40, 40, 40, 13824, 10000.0), 1, 2)},
      {"llama2-70b", with_tokens(shape(4096, 32000, 8192, 80, 64, 8, 28672, 10000.0), 1, 2)},
      {"llama3-8b",
       with_tokens(shape(8192, 128256, 4096, 32, 32, 8, 14336, 500000.0), 128000, 128001)},
      {"llama3-70b",
       with_tokens(shape(8192, 128256, 8192, 80, 64, 8, 28672, 500000.0), 128000, 128001)},
      {"llama3.1-8b", llama31(shape(131072, 128256, 4096, 32, 32, 8, 14336, 500000.0), 8.0, false)},
      {"llama3.1-70b",
       llama31(shape(131072, 128256, 8192, 80, 64, 8, 28672, 500000.0), 8.0, false)},
      {"llama3.2-1b", llama31(shape(131072, 128256, 2048, 16, 32, 8, 8192, 500000.0), 32.0, true)},
      {"llama3.2-3b", llama31(shape(131072, 128256, 3072, 28, 24, 8, 8192, 500000.0), 32.0, true)},
      // CPU scale: the benchmark model of the issue, and smaller ones for tests.
      {"small", shape(256, 8000, 512, 4, 8, 4, 1376, 10000.0)},
      {"tiny", shape(64, 512, 64, 2, 4, 2, 176, 10000.0)},
      {"micro", shape(16, 64, 32, 2, 4, 2, 64, 10000.0)},
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

void check_model_config(const ModelConfig& m) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw InputError("model shape: " + what);
  };
  need(m.context >= 1, "--max_context_width must be at least 1");
  need(m.vocab >= 2, "--vocab_size must be at least 2");
  need(m.hidden >= 2 && m.layers >= 1 && m.heads >= 1 && m.kv_heads >= 1 && m.intermediate >= 1,
       "--hidden_width, --num_layers, --num_heads, --num_key_value_heads and "
       "--intermediate_size must be positive");
  need(m.hidden % m.heads == 0, "--hidden_width " + std::to_string(m.hidden) +
                                    " is not divisible by --num_heads " + std::to_string(m.heads));
  need(m.heads % m.kv_heads == 0, "--num_heads " + std::to_string(m.heads) +
                                      " is not divisible by --num_key_value_heads " +
                                      std::to_string(m.kv_heads));
  need(m.head_dim() % 2 == 0, "head dimension " + std::to_string(m.head_dim()) +
                                  " (hidden/heads) must be even for rotary embeddings");
  need(m.rope_theta > 0, "--rope_theta must be positive");
  const RopeScaling& r = m.rope_scaling;
  need(!r.enabled() || r.type == "llama3",
       "rope_scaling type " + r.type + " is not supported (llama3 or none)");
  need(!r.enabled() || (r.factor >= 1.0 && r.low_freq_factor > 0 &&
                        r.high_freq_factor > r.low_freq_factor && r.original_context >= 1),
       "--rope_scaling " + rope_scaling_str(r) +
           ": expected factor >= 1, 0 < low_freq_factor < high_freq_factor and "
           "original context >= 1");
}

std::string rope_scaling_str(const RopeScaling& r) {
  if (!r.enabled()) return "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s:%g,%g,%g,%lld", r.type.c_str(), r.factor, r.low_freq_factor,
                r.high_freq_factor, static_cast<long long>(r.original_context));
  return buf;
}

RopeScaling parse_rope_scaling(const std::string& text) {
  if (text == "none") return {};
  const std::string bad = "--rope_scaling " + text +
                          ": expected none or llama3:FACTOR,LOW_FREQ_FACTOR,HIGH_FREQ_FACTOR,"
                          "ORIGINAL_CONTEXT (Llama 3.1: llama3:8,1,4,8192)";
  if (text.rfind("llama3:", 0) != 0) throw InputError(bad);
  std::istringstream in(text.substr(7));
  RopeScaling r;
  r.type = "llama3";
  char c1 = 0, c2 = 0, c3 = 0;
  double orig = 0;
  if (!(in >> r.factor >> c1 >> r.low_freq_factor >> c2 >> r.high_freq_factor >> c3 >> orig) ||
      c1 != ',' || c2 != ',' || c3 != ',' || !(in >> std::ws).eof() || orig != std::floor(orig) ||
      orig < 1 || orig > 1e12)
    throw InputError(bad);
  r.original_context = static_cast<std::int64_t>(orig);
  return r;
}

std::vector<double> rope_inv_freq(const ModelConfig& m) {
  const std::int64_t hd = m.head_dim();
  std::vector<double> inv(static_cast<std::size_t>(hd / 2));
  const RopeScaling& r = m.rope_scaling;
  const double pi = 3.14159265358979323846;
  const double low_wavelen = static_cast<double>(r.original_context) / r.low_freq_factor;
  const double high_wavelen = static_cast<double>(r.original_context) / r.high_freq_factor;
  for (std::size_t i = 0; i < inv.size(); ++i) {
    double f = 1.0 / std::pow(m.rope_theta, 2.0 * static_cast<double>(i) / static_cast<double>(hd));
    if (r.enabled()) {
      const double wavelen = 2.0 * pi / f;
      if (wavelen > low_wavelen) {
        f /= r.factor;                       // low frequencies: stretched to the longer context
      } else if (wavelen >= high_wavelen) {  // the band between: blended
        const double smooth =
            (static_cast<double>(r.original_context) / wavelen - r.low_freq_factor) /
            (r.high_freq_factor - r.low_freq_factor);
        f = (1.0 - smooth) * f / r.factor + smooth * f;
      }  // high frequencies (wavelength below original/high_freq_factor): kept
    }
    inv[i] = f;
  }
  return inv;
}

std::int64_t embedding_params(const ModelConfig& m) { return m.vocab * m.hidden; }

std::int64_t block_params(const ModelConfig& m) {
  const std::int64_t attn = m.hidden * m.hidden * 2 + 2 * m.kv_dim() * m.hidden;
  const std::int64_t ffn = 3 * m.hidden * m.intermediate;
  return attn + ffn + 2 * m.hidden;
}

std::int64_t head_params(const ModelConfig& m) {
  return m.hidden + (m.tied ? 0 : m.vocab * m.hidden);
}

std::int64_t total_params(const ModelConfig& m) {
  return embedding_params(m) + m.layers * block_params(m) + head_params(m);
}

double flops_per_token(const ModelConfig& m) {
  const double n = static_cast<double>(m.layers * block_params(m) + m.hidden + m.vocab * m.hidden);
  return 6.0 * n + 12.0 * static_cast<double>(m.layers * m.hidden * m.context);
}

ModelConfig apply_shape_flags(ModelConfig m, const ShapeFlags& f) {
  const std::pair<std::int64_t*, const std::optional<std::int64_t>*> shapes[] = {
      {&m.context, &f.context}, {&m.vocab, &f.vocab}, {&m.hidden, &f.hidden},
      {&m.layers, &f.layers},   {&m.heads, &f.heads}, {&m.kv_heads, &f.kv_heads},
      {&m.intermediate, &f.intermediate}};
  for (const auto& [field, flag] : shapes)
    if (*flag) *field = **flag;
  if (f.rope_theta > 0) m.rope_theta = f.rope_theta;
  if (!f.rope_scaling.empty()) m.rope_scaling = parse_rope_scaling(f.rope_scaling);
  if (f.tie >= 0) m.tied = f.tie == 1;
  return m;
}

}  // namespace wireup::train
