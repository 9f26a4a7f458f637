#include "checkpoint/dpo_meta.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::train {

using nlohmann::json;

std::string dpo_meta_json(const DpoMeta& d) {
  const json j = {{"loss_type", preference::dpo_loss_name(d.settings.loss)},
                  {"beta", d.settings.beta},
                  {"label_smoothing", d.settings.label_smoothing},
                  {"sft_weight", d.settings.sft_weight},
                  {"reference", d.reference},
                  {"reference_source", d.reference_source},
                  {"reference_fingerprint", d.reference_fingerprint}};
  return j.dump(-1, ' ', true, json::error_handler_t::replace);
}

DpoMeta dpo_meta_from_json(const std::string& json_text, const std::string& name) {
  DpoMeta d;
  try {
    const json j = json::parse(json_text);
    d.settings.loss = preference::parse_dpo_loss(j.at("loss_type").get<std::string>(), "loss_type");
    d.settings.beta = j.at("beta").get<double>();
    d.settings.label_smoothing = j.at("label_smoothing").get<double>();
    d.settings.sft_weight = j.at("sft_weight").get<double>();
    d.reference = j.at("reference").get<std::string>();
    d.reference_source = j.at("reference_source").get<std::string>();
    d.reference_fingerprint = j.at("reference_fingerprint").get<std::string>();
  } catch (const std::exception& e) {
    throw InputError(name + ": dpo: " + e.what());
  }
  if (d.reference != "adapters_off" && d.reference != "frozen_copy")
    throw InputError(name + ": dpo: reference '" + escape_text(d.reference) +
                     "', expected adapters_off or frozen_copy");
  if (const std::string problem = preference::dpo_settings_problem(d.settings); !problem.empty())
    throw InputError(name + ": dpo: " + problem);
  return d;
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

}  // namespace

std::string dpo_mismatch(const std::optional<DpoMeta>& saved, const std::optional<DpoMeta>& run) {
  if (!saved && !run) return "";
  if (!saved) return "saved from a run that did not train DPO, this run trains DPO on pairs";
  if (!run) return "saved from a DPO run (preference data), this run does not train DPO";
  const preference::DpoSettings &a = saved->settings, &b = run->settings;
  if (a.loss != b.loss)
    return std::string("saved with --dpo_loss ") + preference::dpo_loss_name(a.loss) +
           ", this run has " + preference::dpo_loss_name(b.loss);
  const std::pair<const char*, std::pair<double, double>> values[] = {
      {"--dpo_beta", {a.beta, b.beta}},
      {"--dpo_label_smoothing", {a.label_smoothing, b.label_smoothing}},
      {"--dpo_sft_weight", {a.sft_weight, b.sft_weight}}};
  for (const auto& [flag, v] : values)
    if (v.first != v.second)
      return std::string("saved with ") + flag + " " + number(v.first) + ", this run has " +
             number(v.second);
  if (saved->reference != run->reference || saved->reference_source != run->reference_source)
    return "saved against the reference " + escape_text(saved->reference) + " " +
           escape_text(saved->reference_source) + ", this run's is " + escape_text(run->reference) +
           " " + escape_text(run->reference_source);
  if (saved->reference_fingerprint != run->reference_fingerprint)
    return "the DPO reference " + escape_text(run->reference_source) +
           " has changed since the checkpoint (fingerprint " +
           escape_text(saved->reference_fingerprint.substr(0, 16)) + ", now " +
           escape_text(run->reference_fingerprint.substr(0, 16)) + ")";
  return "";
}

}  // namespace wireup::train
