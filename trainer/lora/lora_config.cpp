#include "lora/lora_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "wireup/error.hpp"

namespace wireup::train::lora {

namespace {

struct Names {
  const char* short_name;
  const char* hf_module;
  const char* hf_parent;
};

// Indexed by Target.
constexpr std::array<Names, 7> kNames{{{"q", "q_proj", "self_attn"},
                                       {"k", "k_proj", "self_attn"},
                                       {"v", "v_proj", "self_attn"},
                                       {"o", "o_proj", "self_attn"},
                                       {"gate", "gate_proj", "mlp"},
                                       {"up", "up_proj", "mlp"},
                                       {"down", "down_proj", "mlp"}}};

const Names& names(Target t) { return kNames.at(static_cast<std::size_t>(t)); }

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string accepted_names() {
  std::string out;
  for (Target t : kAllTargets) {
    if (!out.empty()) out += ", ";
    out += std::string(short_name(t)) + " (" + hf_module(t) + ")";
  }
  return out;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

const char* short_name(Target t) { return names(t).short_name; }
const char* hf_module(Target t) { return names(t).hf_module; }
const char* hf_parent(Target t) { return names(t).hf_parent; }

bool LoraConfig::adapts(Target t) const {
  return std::find(targets.begin(), targets.end(), t) != targets.end();
}

std::vector<Target> parse_targets(const std::string& csv) {
  std::vector<Target> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = csv.find(',', begin);
    const std::string item =
        trim(csv.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    const auto* it = std::find_if(kAllTargets.begin(), kAllTargets.end(), [&](Target t) {
      return item == short_name(t) || item == hf_module(t);
    });
    if (it == kAllTargets.end())
      throw InputError("--lora_targets '" + csv + "': " +
                       (item.empty() ? std::string("an empty item") : "unknown '" + item + "'") +
                       ": expected a comma list of " + accepted_names());
    out.push_back(*it);
    if (comma == std::string::npos) break;
    begin = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string targets_csv(const std::vector<Target>& targets) {
  std::string out;
  for (Target t : targets) {
    if (!out.empty()) out += ",";
    out += short_name(t);
  }
  return out;
}

void validate(const LoraConfig& c) {
  if (c.rank < 1 || c.rank > kMaxRank)
    throw InputError("--lora_rank " + std::to_string(c.rank) + ": expected 1 to " +
                     std::to_string(kMaxRank));
  if (!std::isfinite(c.alpha) || c.alpha <= 0)
    throw InputError("--lora_alpha " + number(c.alpha) +
                     ": expected a finite number > 0 (required with --lora_rank; "
                     "the adapter's scale is alpha / rank)");
  if (!(c.dropout >= 0 && c.dropout < 1))
    throw InputError("--lora_dropout " + number(c.dropout) + ": expected 0 <= p < 1");
  if (c.targets.empty())
    throw InputError("--lora_targets is empty: expected at least one of " + accepted_names());
  if (!std::is_sorted(c.targets.begin(), c.targets.end()) ||
      std::adjacent_find(c.targets.begin(), c.targets.end()) != c.targets.end())
    throw InputError("--lora_targets " + targets_csv(c.targets) +
                     ": expected each projection once, in the order q,k,v,o,gate,up,down");
}

}  // namespace wireup::train::lora
