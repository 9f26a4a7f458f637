#include "models/family_registry.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include "models/llama/llama_family.hpp"
#include "models/qwen/qwen_family.hpp"
#include "wireup/error.hpp"

namespace wireup::train {
namespace {

// Every family the trainer knows: a new one is a line here, or a
// register_family() call of a program that links one more (tests/).
std::vector<const ModelFamily*>& families() {
  static std::vector<const ModelFamily*> all{&llama::llama_family(), &qwen::qwen3_family(),
                                             &qwen::qwen2_family()};
  return all;
}

// Every family's presets, the family named in each (built on each call:
// families may be registered before main).
std::map<std::string, ModelConfig> presets() {
  std::map<std::string, ModelConfig> out;
  for (const ModelFamily* f : families())
    for (const auto& [name, shape] : f->presets) {
      ModelConfig m = shape;
      m.family = f->name;
      out.emplace(name, m);
    }
  return out;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

void register_family(const ModelFamily& family) {
  const std::map<std::string, ModelConfig> known = presets();
  for (const ModelFamily* f : families()) {
    if (f == &family) return;
    if (std::string(f->name) == family.name ||
        std::string(f->hf_model_type) == family.hf_model_type)
      throw std::logic_error(std::string("register_family: ") + family.name + " (model_type " +
                             family.hf_model_type + ") clashes with the family " + f->name);
  }
  for (const auto& [name, shape] : family.presets)
    if (known.count(name) != 0)
      throw std::logic_error(std::string("register_family: ") + family.name + "'s preset " + name +
                             " is another family's");
  families().push_back(&family);
}

std::vector<std::string> family_names() {
  std::vector<std::string> out;
  for (const ModelFamily* f : families()) out.emplace_back(f->name);
  return out;
}

const ModelFamily& model_family(const std::string& name) {
  for (const ModelFamily* f : families())
    if (name == f->name) return *f;
  throw InputError("model family '" + name + "': expected one of " + joined(family_names()));
}

const ModelFamily& model_family(const ModelConfig& m) { return model_family(m.family); }

const ModelFamily* family_of_hf_model_type(const std::string& model_type) {
  for (const ModelFamily* f : families())
    if (model_type == f->hf_model_type) return f;
  return nullptr;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto& [name, cfg] : presets()) out.push_back(name);
  return out;
}

ModelConfig preset(const std::string& name) {
  const std::map<std::string, ModelConfig> all = presets();
  const auto it = all.find(name);
  if (it != all.end()) return it->second;
  throw InputError("--preset: unknown model " + name + " (known: " + joined(preset_names()) + ")");
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
  if (!f.family.empty()) m.family = model_family(f.family).name;
  for (const auto& [field, flag] : shapes)
    if (*flag) *field = **flag;
  if (f.rope_theta > 0) m.rope_theta = f.rope_theta;
  if (!f.rope_scaling.empty()) m.rope_scaling = parse_rope_scaling(f.rope_scaling);
  if (f.tie >= 0) m.tied = f.tie == 1;
  return m;
}

void check_model_config(const ModelConfig& m) {
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw InputError("model shape: " + what);
  };
  const ModelFamily& family = model_family(m.family);
  need(m.context >= 1, "--max_context_width must be at least 1");
  need(m.vocab >= 2, "--vocab_size must be at least 2");
  need(m.hidden >= 2 && m.layers >= 1 && m.heads >= 1 && m.kv_heads >= 1 && m.intermediate >= 1,
       "--hidden_width, --num_layers, --num_heads, --num_key_value_heads and "
       "--intermediate_size must be positive");
  need(m.head_width >= 0 && m.head_width <= 4096, "--head_dim must be 0 (hidden / heads) to 4096");
  need(family.free_head_dim || m.head_width == 0 || m.head_width * m.heads == m.hidden,
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

void check_lora_targets(const ModelConfig& m, const std::vector<lora::Target>& targets,
                        const std::string& what) {
  check_lora_targets(model_family(m), targets, what);
}

void check_lora_targets(const ModelFamily& f, const std::vector<lora::Target>& targets,
                        const std::string& what) {
  for (const lora::Target t : targets)
    if (std::find(f.lora_targets.begin(), f.lora_targets.end(), t) == f.lora_targets.end())
      throw InputError(what + ": " + lora::short_name(t) + " (" + lora::hf_module(t) +
                       ") is not a projection the " + f.display + " family offers LoRA on (" +
                       lora::targets_csv(f.lora_targets) + ")");
}

std::int64_t embedding_params(const ModelConfig& m) { return m.vocab * m.hidden; }

std::int64_t block_params(const ModelConfig& m) { return model_family(m).block_params(m); }

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

}  // namespace wireup::train
