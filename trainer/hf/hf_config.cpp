#include "hf/hf_config.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

#include "models/family_registry.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

using nlohmann::json;

namespace wireup::train::hf {
namespace {

json rope_scaling_json(const RopeScaling& r) {
  if (!r.enabled()) return nullptr;
  return {{"rope_type", r.type},
          {"factor", r.factor},
          {"low_freq_factor", r.low_freq_factor},
          {"high_freq_factor", r.high_freq_factor},
          {"original_max_position_embeddings", r.original_context}};
}

json token_id(std::int64_t id) { return id >= 0 ? json(id) : json(nullptr); }

bool truthy(const json& c, const char* key) {
  return c.contains(key) && c[key].is_boolean() && c[key].get<bool>();
}

// rope_scaling of a config.json: none (null, absent, rope_type "default"),
// llama3 (every field a number), or the reason it cannot be represented.
std::optional<RopeScaling> read_rope_scaling(const json& c, std::string& unsupported) {
  if (!c.contains("rope_scaling") || c["rope_scaling"].is_null()) return RopeScaling{};
  const json& r = c["rope_scaling"];
  const std::string what = "rope_scaling=" + r.dump();
  if (!r.is_object()) {
    unsupported = what + " (not an object)";
    return std::nullopt;
  }
  // transformers reads rope_type, older configs say type.
  const json type = r.contains("rope_type") ? r["rope_type"] : r.value("type", json("default"));
  if (type == "default") return RopeScaling{};
  if (type != "llama3") {
    unsupported = what + " (wireup supports rope_type llama3 or none)";
    return std::nullopt;
  }
  RopeScaling s;
  s.type = "llama3";
  for (const char* k :
       {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"})
    if (!r.contains(k) || !r[k].is_number()) {
      unsupported = what + " (llama3 needs a number " + k + ")";
      return std::nullopt;
    }
  s.factor = r["factor"].get<double>();
  s.low_freq_factor = r["low_freq_factor"].get<double>();
  s.high_freq_factor = r["high_freq_factor"].get<double>();
  const double orig = r["original_max_position_embeddings"].get<double>();
  if (orig != std::floor(orig) || orig < 1 || orig > 1e15) {
    unsupported =
        what + " (original_max_position_embeddings is not a positive integer below 10^15)";
    return std::nullopt;
  }
  s.original_context = static_cast<std::int64_t>(orig);
  return s;
}

}  // namespace

std::string config_json(const ModelConfig& m, const std::string& torch_dtype) {
  const ModelFamily& family = model_family(m);
  json j = {
      {"architectures", {family.hf_architecture}},
      {"model_type", family.hf_model_type},
      {"hidden_size", m.hidden},
      {"intermediate_size", m.intermediate},
      {"num_attention_heads", m.heads},
      {"num_key_value_heads", m.kv_heads},
      {"num_hidden_layers", m.layers},
      {"head_dim", m.head_dim()},
      {"vocab_size", m.vocab},
      {"max_position_embeddings", m.context},
      {"rope_theta", m.rope_theta},
      {"rope_scaling", rope_scaling_json(m.rope_scaling)},
      {"rms_norm_eps", m.norm_eps},
      {"hidden_act", family.hf_activation},
      {"attention_dropout", 0.0},
      {"initializer_range", 0.02},
      {"tie_word_embeddings", m.tied},
      {"bos_token_id", token_id(m.bos_token_id)},
      {"eos_token_id", token_id(m.eos_token_id)},
      {"use_cache", true},
      {"torch_dtype", torch_dtype},
  };
  family.write_hf_fields(m, j);
  return j.dump(2) + "\n";
}

void read_model_extras(const std::string& text, ModelConfig& m) {
  const json c = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!c.is_object()) return;  // check_config names a file that is not a JSON object
  std::string unsupported;
  if (c.contains("model_type") && c["model_type"].is_string())
    if (const ModelFamily* f = family_of_hf_model_type(c["model_type"].get<std::string>()))
      m.family = f->name;
  if (model_family(m).free_head_dim && c.contains("head_dim") && c["head_dim"].is_number_integer())
    m.head_width = c["head_dim"].get<std::int64_t>();
  if (const auto rope = read_rope_scaling(c, unsupported)) m.rope_scaling = *rope;
  m.tied = truthy(c, "tie_word_embeddings");
  for (auto [key, id] :
       {std::pair{"bos_token_id", &m.bos_token_id}, std::pair{"eos_token_id", &m.eos_token_id}})
    if (c.contains(key) && c[key].is_number_integer()) *id = c[key].get<std::int64_t>();
}

namespace {

// What of config.json `c` the family of `m` cannot represent, whatever the
// flags; `rope` is set to its rope_scaling when that can be represented.
std::vector<std::string> unsupported_fields(const json& c, const ModelConfig& m,
                                            std::optional<RopeScaling>& rope) {
  std::vector<std::string> unsupported;
  const ModelFamily& family = model_family(m);
  const std::string model = std::string("wireup's ") + family.display;
  const std::string type = c.value("model_type", json(family.hf_model_type)).dump();
  if (c.contains("model_type") && c["model_type"] != family.hf_model_type) {
    std::string known;
    for (const auto& n : family_names())
      known += (known.empty() ? "" : ", ") + std::string(model_family(n).hf_model_type);
    unsupported.push_back(
        "model_type=" + type + " (a " + family.hf_model_type +
        " checkpoint is expected; wireup trains the dense families " + known +
        (type.find("moe") != std::string::npos ? "; mixture-of-experts is not supported" : "") +
        ")");
  }
  if (c.contains("hidden_act") && c["hidden_act"] != family.hf_activation)
    unsupported.push_back("hidden_act=" + c["hidden_act"].dump() + " (" + model + " uses " +
                          family.hf_activation + ")");
  family.unsupported_hf_fields(c, model, unsupported);
  if (c.contains("quantization_config") && !c["quantization_config"].is_null())
    unsupported.push_back("quantization_config (wireup loads F32, BF16 or F16 weights)");
  if (c.contains("head_dim") && !c["head_dim"].is_null() &&
      !(c["head_dim"].is_number_integer() && c["head_dim"].get<std::int64_t>() == m.head_dim()))
    unsupported.push_back(
        "head_dim=" + c["head_dim"].dump() + " (" + model + "'s head dimension is " +
        (family.free_head_dim ? "--head_dim " : "hidden_size/num_attention_heads = ") +
        std::to_string(m.head_dim()) + ")");
  std::string rope_problem;
  rope = read_rope_scaling(c, rope_problem);
  if (!rope) unsupported.push_back(rope_problem);
  return unsupported;
}

// What of config.json `c` differs from the model flags `m`.
std::vector<std::string> differing_fields(const json& c, const ModelConfig& m,
                                          const std::optional<RopeScaling>& rope) {
  std::vector<std::string> diffs;
  auto integer = [&](const char* key, std::int64_t want, const char* flag,
                     std::optional<std::int64_t> fallback = std::nullopt) {
    std::int64_t have = 0;
    if (c.contains(key) && c[key].is_number_integer()) {
      have = c[key].get<std::int64_t>();
    } else if (!c.contains(key) && fallback) {
      have = *fallback;
    } else {
      diffs.push_back(std::string(key) + " is missing or not an integer");
      return;
    }
    if (have != want)
      diffs.push_back(std::string(key) + "=" + std::to_string(have) + " but " + flag + " " +
                      std::to_string(want));
  };
  integer("hidden_size", m.hidden, "--hidden_width");
  integer("intermediate_size", m.intermediate, "--intermediate_size");
  integer("num_hidden_layers", m.layers, "--num_layers");
  integer("num_attention_heads", m.heads, "--num_heads");
  // HF's default for num_key_value_heads: as many as attention heads (no GQA).
  std::optional<std::int64_t> heads;
  if (c.contains("num_attention_heads") && c["num_attention_heads"].is_number_integer())
    heads = c["num_attention_heads"].get<std::int64_t>();
  integer("num_key_value_heads", m.kv_heads, "--num_key_value_heads", heads);
  integer("vocab_size", m.vocab, "--vocab_size");
  auto real = [&](const char* key, double want, const char* what, double fallback) {
    const double have = c.contains(key) && c[key].is_number() ? c[key].get<double>() : fallback;
    if (std::abs(have - want) > 1e-9 * std::max(std::abs(want), 1.0)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s=%g but %s %g", key, have, what, want);
      diffs.push_back(buf);
    }
  };
  real("rope_theta", m.rope_theta, "--rope_theta", 10000.0);
  real("rms_norm_eps", m.norm_eps, "wireup's RMSNorm eps is", 1e-6);
  if (rope && *rope != m.rope_scaling)
    diffs.push_back("rope_scaling=" + c["rope_scaling"].dump() + " but --rope_scaling " +
                    rope_scaling_str(m.rope_scaling));
  // A tied file into an untied model is fine (lm_head starts as a copy); the
  // other way the file's lm_head would have nowhere to go.
  if (m.tied && !truthy(c, "tie_word_embeddings"))
    diffs.push_back("tie_word_embeddings=false but the model ties them (--tie_word_embeddings 1)");
  return diffs;
}

}  // namespace

void check_config_text(const std::string& text, const std::string& name) {
  io::check_json_shape(text, name, kMaxConfigDepth, kMaxConfigValues);
}

ConfigFacts check_config(const std::string& text, const std::string& name, const ModelConfig& m) {
  check_config_text(text, name);
  json c;
  try {
    c = json::parse(text);
  } catch (const std::exception& e) {
    throw InputError(name + ": not JSON (" + e.what() + ")");
  }
  if (!c.is_object()) throw InputError(name + ": not a JSON object");
  std::optional<RopeScaling> rope;
  const auto unsupported = unsupported_fields(c, m, rope);
  const auto diffs = differing_fields(c, m, rope);
  if (!unsupported.empty() || !diffs.empty()) {
    std::string msg = name + ":";
    if (!unsupported.empty()) {
      msg += std::string(" fields wireup's ") + model_family(m).display + " cannot represent:";
      for (const auto& u : unsupported) msg += "\n  " + u;
    }
    if (!diffs.empty()) {
      msg += std::string(unsupported.empty() ? "" : "\n") + " does not match the model flags:";
      for (const auto& d : diffs) msg += "\n  " + d;
    }
    throw InputError(msg);
  }
  ConfigFacts facts;
  facts.tied = truthy(c, "tie_word_embeddings");
  if (c.contains("max_position_embeddings") && c["max_position_embeddings"].is_number_integer())
    facts.max_position_embeddings = c["max_position_embeddings"].get<std::int64_t>();
  return facts;
}

std::uint64_t parse_byte_size(const std::string& text, const std::string& flag) {
  static const std::pair<const char*, std::uint64_t> units[] = {
      {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},   {"TiB", 1ull << 40},
      {"KB", 1000ull},     {"MB", 1000000ull},  {"GB", 1000000000ull}, {"TB", 1000000000000ull},
      {"B", 1ull},         {"", 1ull}};
  const std::string bad =
      flag + " " + text + ": expected a size in bytes, e.g. 5GB, 200MB, 1048576";
  std::size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0 || digits > 15) throw InputError(bad);
  const std::uint64_t n = std::stoull(text.substr(0, digits));
  const std::string unit = text.substr(digits);
  for (const auto& [suffix, scale] : units)
    if (unit == suffix) {
      if (n == 0 || n > (~0ull) / scale) throw InputError(bad);
      return n * scale;
    }
  throw InputError(bad);
}

std::vector<std::size_t> plan_shards(const std::vector<std::uint64_t>& tensor_bytes,
                                     std::uint64_t max_bytes) {
  std::vector<std::size_t> shard_of;
  std::size_t shard = 0;
  std::uint64_t filled = 0;
  for (const std::uint64_t b : tensor_bytes) {
    if (filled > 0 && filled + b > max_bytes) {
      ++shard;
      filled = 0;
    }
    filled += b;
    shard_of.push_back(shard);
  }
  return shard_of;
}

std::string shard_file_name(std::size_t index, std::size_t count) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "model-%05zu-of-%05zu.safetensors", index + 1, count);
  return buf;
}

std::string index_json(const std::vector<std::string>& names, const std::vector<std::string>& files,
                       std::uint64_t total_size) {
  json map = json::object();
  for (std::size_t i = 0; i < names.size(); ++i) map[names[i]] = files.at(i);
  return json{{"metadata", {{"total_size", total_size}}}, {"weight_map", map}}.dump(2) + "\n";
}

}  // namespace wireup::train::hf
