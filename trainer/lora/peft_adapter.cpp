#include "lora/peft_adapter.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::train::lora {

namespace {

using json = nlohmann::json;

std::string module_list() {
  std::string out;
  for (Target t : kAllTargets) out += std::string(out.empty() ? "" : ", ") + hf_module(t);
  return out;
}

[[noreturn]] void refuse(const std::string& where, const std::string& key, const json& v,
                         const std::string& expected) {
  throw InputError(where + ": " + key + "=" + v.dump() + ": " + expected);
}

// c[key] when present and not null, else nullptr (PEFT's default applies).
const json* value(const json& c, const char* key) {
  const auto it = c.find(key);
  return it == c.end() || it->is_null() ? nullptr : &*it;
}

// A boolean key that must be false (or absent: PEFT's default) here.
void require_false(const json& c, const std::string& where, const char* key, const char* why) {
  const json* v = value(c, key);
  if (v && (!v->is_boolean() || v->get<bool>()))
    refuse(where, key, *v, std::string("expected false (") + why + ")");
}

// A key that must be null or absent.
void require_null(const json& c, const std::string& where, const char* key, const char* why) {
  if (const json* v = value(c, key))
    refuse(where, key, *v, std::string("expected null (") + why + ")");
}

// A list or object key that must be null, absent or empty.
void require_empty(const json& c, const std::string& where, const char* key, const char* why) {
  const json* v = value(c, key);
  if (v && !((v->is_array() || v->is_object()) && v->empty()))
    refuse(where, key, *v, std::string("expected null or empty (") + why + ")");
}

void check_method(const json& c, const std::string& where) {
  const json* type = value(c, "peft_type");
  if (!type) throw InputError(where + ": peft_type missing: expected \"LORA\"");
  if (*type != "LORA") refuse(where, "peft_type", *type, "expected \"LORA\" (only LoRA adapters)");
  if (const json* task = value(c, "task_type"); task && *task != "CAUSAL_LM")
    refuse(where, "task_type", *task, "expected \"CAUSAL_LM\" (a *ForCausalLM's adapter)");
  if (const json* bias = value(c, "bias"); bias && *bias != "none")
    refuse(where, "bias", *bias, "expected \"none\" (no trained biases)");
  require_false(c, where, "use_dora", "DoRA is not supported");
  require_false(c, where, "use_rslora", "the scale is lora_alpha / r, not / sqrt(r)");
  require_false(c, where, "fan_in_fan_out", "the projections are Linear layers");
  require_false(c, where, "lora_bias", "lora_B has no bias");
  require_empty(c, where, "modules_to_save", "no module is trained whole");
  require_empty(c, where, "exclude_modules", "every layer's targets are adapted");
  require_empty(c, where, "trainable_token_indices", "no embedding rows are trained");
  require_empty(c, where, "target_parameters", "only modules are targeted");
  require_null(c, where, "layers_to_transform", "every layer is adapted");
  require_null(c, where, "layers_pattern", "every layer is adapted");
  require_null(c, where, "layer_replication", "the base's layers are used as they are");
  require_empty(c, where, "rank_pattern", "one r for every module");
  require_empty(c, where, "alpha_pattern", "one lora_alpha for every module");
}

std::int64_t read_rank(const json& c, const std::string& where) {
  const json* r = value(c, "r");
  const std::string expected = "expected an integer 1 to " + std::to_string(kMaxRank);
  if (!r) throw InputError(where + ": r missing: " + expected);
  if (r->is_number_unsigned() && r->get<std::uint64_t>() <= std::uint64_t(kMaxRank) &&
      r->get<std::uint64_t>() >= 1)
    return r->get<std::int64_t>();
  refuse(where, "r", *r, expected);
}

double read_alpha(const json& c, const std::string& where) {
  const json* a = value(c, "lora_alpha");
  if (!a) throw InputError(where + ": lora_alpha missing: expected a number > 0");
  if (!a->is_number() || !(a->get<double>() > 0) || !std::isfinite(a->get<double>()))
    refuse(where, "lora_alpha", *a, "expected a number > 0");
  return a->get<double>();
}

double read_dropout(const json& c, const std::string& where) {
  const json* d = value(c, "lora_dropout");
  if (!d) return 0.0;
  if (!d->is_number() || !(d->get<double>() >= 0 && d->get<double>() < 1))
    refuse(where, "lora_dropout", *d, "expected a number 0 <= p < 1");
  return d->get<double>();
}

std::vector<Target> read_target_modules(const json& c, const std::string& where) {
  const std::string expected = "expected a list of module names among " + module_list();
  const json* m = value(c, "target_modules");
  if (!m) throw InputError(where + ": target_modules missing: " + expected);
  if (m->is_string())
    refuse(where, "target_modules", *m,
           "a string is a regular expression over module paths, not supported: " + expected);
  if (!m->is_array() || m->empty()) refuse(where, "target_modules", *m, expected);
  std::vector<Target> out;
  for (const json& item : *m) {
    const auto* it = std::find_if(kAllTargets.begin(), kAllTargets.end(),
                                  [&](Target t) { return item == hf_module(t); });
    if (it == kAllTargets.end())
      throw InputError(where + ": target_modules names " + item.dump() +
                       ": not a projection the trainer adapts: " + expected);
    out.push_back(*it);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string shape_str(const std::vector<std::int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

std::vector<std::int64_t> expected_shape(Target t, Matrix m, std::int64_t rank,
                                         const BaseShape& b) {
  const ProjectionDims d = projection_dims(t, b.hidden, b.q_dim, b.kv_dim, b.intermediate);
  return m == Matrix::A ? std::vector<std::int64_t>{rank, d.in}
                        : std::vector<std::int64_t>{d.out, rank};
}

constexpr const char* kPrefix = "base_model.model.model.layers.";

}  // namespace

std::string adapter_config_json(const LoraConfig& c, const std::string& base_model_name_or_path) {
  json modules = json::array();
  for (Target t : c.targets) modules.push_back(hf_module(t));
  json j = {{"peft_type", "LORA"},
            {"task_type", "CAUSAL_LM"},
            {"r", c.rank},
            {"lora_dropout", c.dropout},
            {"target_modules", modules},
            {"bias", "none"},
            {"fan_in_fan_out", false},
            {"use_rslora", false},
            {"use_dora", false},
            {"inference_mode", true},
            {"modules_to_save", nullptr},
            {"layers_to_transform", nullptr},
            {"layers_pattern", nullptr},
            {"rank_pattern", json::object()},
            {"alpha_pattern", json::object()},
            {"init_lora_weights", true},
            {"base_model_name_or_path", base_model_name_or_path}};
  // PEFT writes an integral alpha as an integer (lora_alpha: 16).
  if (c.alpha == std::floor(c.alpha) && std::abs(c.alpha) < 9.0e15)
    j["lora_alpha"] = static_cast<std::int64_t>(c.alpha);
  else
    j["lora_alpha"] = c.alpha;
  return j.dump(2) + "\n";
}

PeftAdapterConfig parse_adapter_config(const std::string& json_text, const std::string& where) {
  io::check_json_shape(json_text, where, kMaxAdapterConfigDepth, kMaxAdapterConfigValues);
  json c;
  try {
    c = json::parse(json_text);
  } catch (const std::exception& e) {
    throw InputError(where + ": not JSON (" + e.what() + ")");
  }
  if (!c.is_object())
    throw InputError(where + ": not a JSON object (expected PEFT's adapter_config.json)");
  check_method(c, where);
  PeftAdapterConfig out;
  out.lora.rank = read_rank(c, where);
  out.lora.alpha = read_alpha(c, where);
  out.lora.dropout = read_dropout(c, where);
  out.lora.targets = read_target_modules(c, where);
  if (const json* base = value(c, "base_model_name_or_path")) {
    if (!base->is_string()) refuse(where, "base_model_name_or_path", *base, "expected a string");
    out.base_model_name_or_path = base->get<std::string>();
  }
  return out;
}

PeftAdapterConfig read_adapter_config(const std::string& adapter_dir) {
  const std::filesystem::path path = std::filesystem::path(adapter_dir) / "adapter_config.json";
  return parse_adapter_config(io::read_text(path, kMaxAdapterConfigBytes), path.string());
}

std::string peft_tensor_name(std::int64_t layer, Target t, Matrix m) {
  return kPrefix + std::to_string(layer) + "." + hf_parent(t) + "." + hf_module(t) +
         (m == Matrix::A ? ".lora_A.weight" : ".lora_B.weight");
}

std::optional<PeftTensorId> parse_peft_tensor_name(const std::string& name) {
  const std::string prefix = kPrefix;
  if (name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const std::size_t dot = name.find('.', prefix.size());
  if (dot == std::string::npos) return std::nullopt;
  const std::string digits = name.substr(prefix.size(), dot - prefix.size());
  if (digits.empty() || digits.size() > 10 || (digits.size() > 1 && digits[0] == '0') ||
      !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
    return std::nullopt;
  const std::int64_t layer = std::stoll(digits);
  if (layer > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  for (Target t : kAllTargets)
    for (Matrix m : {Matrix::A, Matrix::B})
      if (name == peft_tensor_name(layer, t, m)) return PeftTensorId{layer, t, m};
  return std::nullopt;
}

ProjectionDims projection_dims(Target t, std::int64_t hidden, std::int64_t q_dim,
                               std::int64_t kv_dim, std::int64_t intermediate) {
  switch (t) {
    case Target::Q:
      return {hidden, q_dim};
    case Target::K:
    case Target::V:
      return {hidden, kv_dim};
    case Target::O:
      return {q_dim, hidden};
    case Target::Gate:
    case Target::Up:
      return {hidden, intermediate};
    case Target::Down:
      return {intermediate, hidden};
  }
  return {};
}

std::vector<AdapterTensor> check_adapter_tensors(const std::vector<TensorShape>& tensors,
                                                 const LoraConfig& c, const BaseShape& base,
                                                 const std::string& where) {
  const std::size_t per_layer = kAllTargets.size() * 2;
  std::vector<bool> seen(static_cast<std::size_t>(std::max<std::int64_t>(base.layers, 0)) *
                         per_layer);
  for (const TensorShape& t : tensors) {
    const std::string at = where + ": tensor '" + t.name + "'";
    const auto id = parse_peft_tensor_name(t.name);
    if (!id)
      throw InputError(at + ": not a LoRA tensor of PEFT's form " + kPrefix +
                       "N.{self_attn,mlp}.<module>.lora_{A,B}.weight");
    if (id->layer >= base.layers)
      throw InputError(at + ": layer " + std::to_string(id->layer) + ", but the base model has " +
                       std::to_string(base.layers) + " layers");
    if (!c.adapts(id->target))
      throw InputError(at + ": " + hf_module(id->target) +
                       " is not among the adapter's target_modules");
    const std::size_t index = static_cast<std::size_t>(id->layer) * per_layer +
                              static_cast<std::size_t>(id->target) * 2 +
                              (id->matrix == Matrix::A ? 0 : 1);
    if (seen[index]) throw InputError(at + " given twice");
    seen[index] = true;
    const auto want = expected_shape(id->target, id->matrix, c.rank, base);
    if (t.shape != want)
      throw InputError(at + ": shape " + shape_str(t.shape) + ", expected " + shape_str(want) +
                       (id->matrix == Matrix::A ? " (lora_A: [r, in])" : " (lora_B: [out, r])") +
                       " for r=" + std::to_string(c.rank));
  }
  std::vector<AdapterTensor> expected;
  for (std::int64_t layer = 0; layer < base.layers; ++layer)
    for (Target t : c.targets)
      for (Matrix m : {Matrix::A, Matrix::B}) {
        const std::size_t index = static_cast<std::size_t>(layer) * per_layer +
                                  static_cast<std::size_t>(t) * 2 + (m == Matrix::A ? 0 : 1);
        AdapterTensor a{
            {layer, t, m}, peft_tensor_name(layer, t, m), expected_shape(t, m, c.rank, base)};
        if (!seen[index]) throw InputError(where + ": tensor '" + a.name + "' missing");
        expected.push_back(std::move(a));
      }
  return expected;
}

}  // namespace wireup::train::lora
