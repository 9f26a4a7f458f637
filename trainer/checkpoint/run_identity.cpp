#include "checkpoint/run_identity.hpp"

#include <cmath>
#include <cstdio>

#include "models/family_registry.hpp"
#include "run_identity_json.hpp"
#include "wireup/file_io.hpp"
#include "wireup/text.hpp"

namespace wireup::train {

using nlohmann::json;

json model_json(const ModelConfig& c) {
  const RopeScaling& rs = c.rope_scaling;
  const json rope_scaling = rs.enabled()
                                ? json{{"rope_type", rs.type},
                                       {"factor", rs.factor},
                                       {"low_freq_factor", rs.low_freq_factor},
                                       {"high_freq_factor", rs.high_freq_factor},
                                       {"original_max_position_embeddings", rs.original_context}}
                                : json(nullptr);
  return {{"family", c.family},
          {"head_dim", c.head_dim()},
          {"context", c.context},
          {"vocab", c.vocab},
          {"hidden", c.hidden},
          {"layers", c.layers},
          {"heads", c.heads},
          {"kv_heads", c.kv_heads},
          {"intermediate", c.intermediate},
          {"rope_theta", c.rope_theta},
          {"norm_eps", c.norm_eps},
          {"rope_scaling", rope_scaling},
          {"tie_word_embeddings", c.tied},
          {"bos_token_id", c.bos_token_id},
          {"eos_token_id", c.eos_token_id}};
}

namespace {

std::int64_t token_id(const json& mo, const char* key) {
  return mo.contains(key) && !mo[key].is_null() ? json_integer<std::int64_t>(mo[key], key) : -1;
}

}  // namespace

ModelConfig model_from_json(const json& mo) {
  ModelConfig m;
  m.context = json_integer<std::int64_t>(mo.at("context"), "context");
  m.vocab = json_integer<std::int64_t>(mo.at("vocab"), "vocab");
  m.hidden = json_integer<std::int64_t>(mo.at("hidden"), "hidden");
  m.layers = json_integer<std::int64_t>(mo.at("layers"), "layers");
  m.heads = json_integer<std::int64_t>(mo.at("heads"), "heads");
  m.kv_heads = json_integer<std::int64_t>(mo.at("kv_heads"), "kv_heads");
  m.intermediate = json_integer<std::int64_t>(mo.at("intermediate"), "intermediate");
  m.rope_theta = mo.at("rope_theta");
  m.norm_eps = mo.at("norm_eps");
  // Checkpoints of Llamas may lack these (written before there were families).
  m.family = mo.value("family", ModelConfig{}.family);
  // A family this build does not know is named; the head width is kept
  // where the family sets it apart from hidden / heads.
  if (model_family(m.family).free_head_dim)
    m.head_width = json_integer<std::int64_t>(mo.at("head_dim"), "head_dim");
  // Checkpoints of untied models without rope scaling may lack these.
  if (mo.contains("rope_scaling") && !mo["rope_scaling"].is_null()) {
    const json& r = mo["rope_scaling"];
    m.rope_scaling.type = r.at("rope_type").get<std::string>();
    m.rope_scaling.factor = r.at("factor");
    m.rope_scaling.low_freq_factor = r.at("low_freq_factor");
    m.rope_scaling.high_freq_factor = r.at("high_freq_factor");
    m.rope_scaling.original_context = json_integer<std::int64_t>(
        r.at("original_max_position_embeddings"), "original_max_position_embeddings");
  }
  m.tied = mo.value("tie_word_embeddings", false);
  m.bos_token_id = token_id(mo, "bos_token_id");
  m.eos_token_id = token_id(mo, "eos_token_id");
  return m;
}

std::string to_json(const RunIdentity& id) {
  const json j = {{"model", model_json(id.model)},
                  {"lora", id.lora ? json::parse(adapter_meta_json(*id.lora)) : json(nullptr)},
                  {"dpo", id.dpo ? json::parse(dpo_meta_json(*id.dpo)) : json(nullptr)}};
  return j.dump(-1, ' ', true, json::error_handler_t::replace);
}

RunIdentity run_identity_from_json(const std::string& text, const std::string& name) {
  if (text.size() > kMaxIdentityJsonBytes)
    throw InputError(name + ": identity of " + std::to_string(text.size()) + " bytes (at most " +
                     std::to_string(kMaxIdentityJsonBytes) + ")");
  io::check_json_shape(text, name, 4, 256);
  RunIdentity id;
  json j;
  try {
    j = json::parse(text);
    const std::size_t keys = j.is_object() ? j.size() : 0;
    if (!(keys == 2 || (keys == 3 && j.contains("dpo"))) || !j.contains("lora") ||
        !j.contains("model"))
      throw InputError("expected {\"dpo\": ..., \"lora\": ..., \"model\": ...}");
    id.model = model_from_json(j["model"]);
    const ModelConfig& m = id.model;
    const RopeScaling& r = m.rope_scaling;
    for (const double v :
         {m.rope_theta, m.norm_eps, r.factor, r.low_freq_factor, r.high_freq_factor})
      if (!std::isfinite(v)) throw InputError("model: a number out of range");
    check_model_config(m);
  } catch (const std::exception& e) {
    throw InputError(name + ": " + e.what());
  }
  if (!j["lora"].is_null()) id.lora = adapter_meta_from_json(j["lora"].dump(), name);
  if (j.contains("dpo") && !j["dpo"].is_null()) id.dpo = dpo_meta_from_json(j["dpo"].dump(), name);
  return id;
}

namespace {

// The first shape field that differs: "layers 2, this run 4".
std::string shape_difference(const ModelConfig& a, const ModelConfig& b) {
  const std::pair<const char*, std::pair<std::int64_t, std::int64_t>> fields[] = {
      {"hidden", {a.hidden, b.hidden}},
      {"layers", {a.layers, b.layers}},
      {"heads", {a.heads, b.heads}},
      {"kv_heads", {a.kv_heads, b.kv_heads}},
      {"head_dim", {a.head_dim(), b.head_dim()}},
      {"intermediate", {a.intermediate, b.intermediate}},
      {"vocab", {a.vocab, b.vocab}},
      {"tie_word_embeddings", {a.tied ? 1 : 0, b.tied ? 1 : 0}},
  };
  for (const auto& [field, v] : fields)
    if (v.first != v.second)
      return std::string(field) + " " + std::to_string(v.first) + ", this run " +
             std::to_string(v.second);
  return "";
}

}  // namespace

std::string identity_mismatch(const RunIdentity& saved, const RunIdentity& run) {
  const ModelConfig& m = saved.model;
  const ModelConfig& e = run.model;
  if (m.family != e.family)
    return "saved from a " + escape_text(m.family) + " model, this run is " + escape_text(e.family);
  if (const std::string d = shape_difference(m, e); !d.empty())
    return "saved from a different model shape: " + d;
  if (m.rope_scaling != e.rope_scaling)
    return "saved with --rope_scaling " + rope_scaling_str(m.rope_scaling) + ", this run has " +
           rope_scaling_str(e.rope_scaling);
  if (std::string a = adapter_mismatch(saved.lora, run.lora); !a.empty()) return a;
  return dpo_mismatch(saved.dpo, run.dpo);
}

}  // namespace wireup::train
