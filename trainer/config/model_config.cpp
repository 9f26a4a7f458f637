#include "config/model_config.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <utility>

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

// Qwen3 (dense) and Qwen2.5, as their published config.json files: a
// 151936-id embedding (Qwen2.5 7B and up: 152064), rope_theta 10^6, RMSNorm
// eps 10^-6, <|endoftext|> and <|im_end|> as bos and eos; Qwen3's head width
// is 128 at every size.
ModelConfig qwen(const char* family, ModelConfig m, std::int64_t head_width, bool tied) {
  m.family = family;
  m.head_width = head_width;
  m.tied = tied;
  m.norm_eps = 1e-6;
  return with_tokens(m, 151643, 151645);
}
ModelConfig qwen3(ModelConfig m, bool tied) { return qwen("qwen3", m, 128, tied); }
ModelConfig qwen25(ModelConfig m, bool tied) { return qwen("qwen2", m, 0, tied); }

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
      {"qwen3-0.6b", qwen3(shape(40960, 151936, 1024, 28, 16, 8, 3072, 1e6), true)},
      {"qwen3-1.7b", qwen3(shape(40960, 151936, 2048, 28, 16, 8, 6144, 1e6), true)},
      {"qwen3-4b", qwen3(shape(40960, 151936, 2560, 36, 32, 8, 9728, 1e6), true)},
      {"qwen3-8b", qwen3(shape(40960, 151936, 4096, 36, 32, 8, 12288, 1e6), false)},
      {"qwen3-14b", qwen3(shape(40960, 151936, 5120, 40, 40, 8, 17408, 1e6), false)},
      {"qwen3-32b", qwen3(shape(40960, 151936, 5120, 64, 64, 8, 25600, 1e6), false)},
      {"qwen2.5-0.5b", qwen25(shape(32768, 151936, 896, 24, 14, 2, 4864, 1e6), true)},
      {"qwen2.5-1.5b", qwen25(shape(32768, 151936, 1536, 28, 12, 2, 8960, 1e6), true)},
      {"qwen2.5-3b", qwen25(shape(32768, 151936, 2048, 36, 16, 2, 11008, 1e6), true)},
      {"qwen2.5-7b", qwen25(shape(32768, 152064, 3584, 28, 28, 4, 18944, 1e6), false)},
      // CPU scale: the benchmark model of the issue, and smaller ones for tests
      // (qwen3-tiny's heads are wider than hidden / heads, as Qwen3 0.6B's are).
      {"small", shape(256, 8000, 512, 4, 8, 4, 1376, 10000.0)},
      {"tiny", shape(64, 512, 64, 2, 4, 2, 176, 10000.0)},
      {"micro", shape(16, 64, 32, 2, 4, 2, 64, 10000.0)},
      {"qwen3-tiny", qwen("qwen3", shape(64, 512, 64, 2, 4, 2, 176, 1e6), 32, true)},
      {"qwen2.5-tiny", qwen25(shape(64, 512, 64, 2, 4, 2, 176, 1e6), true)},
  };
  return p;
}

// Every family the trainer knows, as plain facts (the computation of each is
// its folder under trainer/models/, tied by name in model_registry.cpp).
constexpr FamilyTraits kFamilies[] = {
    {"llama", "Llama", "llama", "LlamaForCausalLM", false, false, false},
    {"qwen3", "Qwen3", "qwen3", "Qwen3ForCausalLM", true, false, true},
    {"qwen2", "Qwen2.5", "qwen2", "Qwen2ForCausalLM", false, true, false},
};

}  // namespace

std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const auto& f : kFamilies) out.emplace_back(f.name);
  return out;
}

const FamilyTraits& family_traits(const std::string& family) {
  for (const auto& f : kFamilies)
    if (family == f.name) return f;
  std::string known;
  for (const auto& n : family_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("model family '" + family + "': expected one of " + known);
}

const FamilyTraits* family_of_hf_model_type(const std::string& model_type) {
  for (const auto& f : kFamilies)
    if (model_type == f.hf_model_type) return &f;
  return nullptr;
}

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
  const FamilyTraits& traits = family_traits(m.family);
  need(m.context >= 1, "--max_context_width must be at least 1");
  need(m.vocab >= 2, "--vocab_size must be at least 2");
  need(m.hidden >= 2 && m.layers >= 1 && m.heads >= 1 && m.kv_heads >= 1 && m.intermediate >= 1,
       "--hidden_width, --num_layers, --num_heads, --num_key_value_heads and "
       "--intermediate_size must be positive");
  need(m.head_width >= 0 && m.head_width <= 4096, "--head_dim must be 0 (hidden / heads) to 4096");
  need(traits.free_head_dim || m.head_width == 0 || m.head_width * m.heads == m.hidden,
       "--head_dim " + std::to_string(m.head_width) + ": the " + m.family +
           " family's head dimension is hidden / heads = " + std::to_string(m.hidden / m.heads));
  need(m.head_width > 0 || m.hidden % m.heads == 0, "--hidden_width " + std::to_string(m.hidden) +
                                                        " is not divisible by --num_heads " +
                                                        std::to_string(m.heads));
  need(m.heads % m.kv_heads == 0, "--num_heads " + std::to_string(m.heads) +
                                      " is not divisible by --num_key_value_heads " +
                                      std::to_string(m.kv_heads));
  need(m.head_dim() % 2 == 0,
       "head dimension " + std::to_string(m.head_dim()) + " must be even for rotary embeddings");
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
  const FamilyTraits& t = family_traits(m.family);
  const std::int64_t qkv = m.q_dim() + 2 * m.kv_dim();
  const std::int64_t attn = qkv * m.hidden + m.hidden * m.q_dim() + (t.qkv_bias ? qkv : 0) +
                            (t.qk_norm ? 2 * m.head_dim() : 0);
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
  return 6.0 * n + 12.0 * static_cast<double>(m.layers * m.q_dim() * m.context);
}

ModelConfig apply_shape_flags(ModelConfig m, const ShapeFlags& f) {
  const std::pair<std::int64_t*, const std::optional<std::int64_t>*> shapes[] = {
      {&m.context, &f.context},
      {&m.vocab, &f.vocab},
      {&m.hidden, &f.hidden},
      {&m.layers, &f.layers},
      {&m.heads, &f.heads},
      {&m.kv_heads, &f.kv_heads},
      {&m.intermediate, &f.intermediate},
      {&m.head_width, &f.head_dim}};
  if (!f.family.empty()) m.family = family_traits(f.family).name;
  for (const auto& [field, flag] : shapes)
    if (*flag) *field = **flag;
  if (f.rope_theta > 0) m.rope_theta = f.rope_theta;
  if (!f.rope_scaling.empty()) m.rope_scaling = parse_rope_scaling(f.rope_scaling);
  if (f.tie >= 0) m.tied = f.tie == 1;
  return m;
}

}  // namespace wireup::train
