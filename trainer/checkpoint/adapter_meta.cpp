#include "checkpoint/adapter_meta.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::train {

using nlohmann::json;

std::string adapter_meta_json(const AdapterMeta& a) {
  const json j = {{"rank", a.lora.rank},
                  {"alpha", a.lora.alpha},
                  {"dropout", a.lora.dropout},
                  {"targets", lora::targets_csv(a.lora.targets)},
                  {"base", a.base},
                  {"base_fingerprint", a.base_fingerprint}};
  return j.dump();
}

AdapterMeta adapter_meta_from_json(const std::string& json_text, const std::string& name) {
  AdapterMeta a;
  try {
    const json j = json::parse(json_text);
    a.lora.rank = j.at("rank").get<std::int64_t>();
    a.lora.alpha = j.at("alpha").get<double>();
    a.lora.dropout = j.at("dropout").get<double>();
    a.lora.targets = lora::parse_targets(j.at("targets").get<std::string>());
    a.base = j.at("base").get<std::string>();
    a.base_fingerprint = j.at("base_fingerprint").get<std::string>();
    lora::validate(a.lora);
  } catch (const std::exception& e) {
    throw InputError(name + ": \"lora\": " + e.what());
  }
  return a;
}

namespace {

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string describe(const AdapterMeta& a) {
  return "rank " + std::to_string(a.lora.rank) + " alpha " + number(a.lora.alpha) + " targets " +
         lora::targets_csv(a.lora.targets);
}

}  // namespace

std::string adapter_mismatch(const std::optional<AdapterMeta>& saved,
                             const std::optional<AdapterMeta>& run) {
  if (!saved && !run) return "";
  if (!run)
    return "it holds LoRA adapters (" + describe(*saved) + " on " + escape_text(saved->base) +
           "), this run trains the full model: pass the same --lora_rank, --lora_alpha, "
           "--lora_targets and --init_from_hf";
  if (!saved) return "it holds a full model, this run trains LoRA adapters";
  if (saved->base_fingerprint != run->base_fingerprint)
    return "its adapters were trained on the base " + escape_text(saved->base) + " (fingerprint " +
           escape_text(saved->base_fingerprint.substr(0, 16)) + "), this run's base is " +
           escape_text(run->base) + " (fingerprint " +
           escape_text(run->base_fingerprint.substr(0, 16)) + ")";
  if (saved->lora.rank != run->lora.rank || saved->lora.alpha != run->lora.alpha ||
      saved->lora.targets != run->lora.targets)
    return "its adapters have " + describe(*saved) + ", this run's " + describe(*run);
  return "";
}

}  // namespace wireup::train
