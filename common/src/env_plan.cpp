#include "wireup/env_plan.hpp"

#include <algorithm>
#include <cctype>

#include "wireup/text.hpp"

namespace wireup {

bool valid_env_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool valid_env_value(std::string_view value) {
  return value.find_first_of(std::string_view("\0\n\r", 3)) == std::string_view::npos;
}

const char* action_name(Action a) {
  switch (a) {
    case Action::Set: return "set";
    case Action::KeptUser: return "kept user value";
    case Action::Unchanged: return "unchanged";
    case Action::Rejected: return "rejected";
    case Action::KeptContainer: return "kept image value";
  }
  return "?";
}

namespace {

// The directories of `dirs` that `list` lacks, in order, colon-joined.
std::string missing_dirs(std::string_view list, std::string_view dirs) {
  const auto have = split(list, ':');
  std::string out;
  for (const auto& d : split(dirs, ':')) {
    if (d.empty() || std::find(have.begin(), have.end(), d) != have.end()) continue;
    out += (out.empty() ? "" : ":") + d;
  }
  return out;
}

// One entry against the task's current value. `submitted` is null when
// every current value counts as the user's.
Decision decide(const EnvEntry& e, const std::optional<std::string>& cur, bool was_ours,
                const EnvLookup* submitted) {
  std::optional<std::string> by_user;
  if (submitted != nullptr) by_user = (*submitted)(e.name);
  const bool from_container = submitted != nullptr && cur && cur != by_user && !was_ours;
  const std::string replaced =
      from_container ? "; replaces " + quoted(*cur) + " from the container image or hook" : "";
  Decision d{e.name, e.value, e.reason, Action::Set, e.source};
  if (e.mode == Mode::IfUnset && cur && !was_ours) {
    if (!from_container)
      return {e.name, *cur, "already set by the user", Action::KeptUser, kByUser};
    if (!e.rendezvous)
      return {e.name, *cur, "set by the container image or hook", Action::KeptContainer,
              kByContainer};
    if (by_user)
      return {e.name, *by_user,
              "the user's value; the container image or hook had replaced it with " + quoted(*cur),
              Action::Set, kByUser};
    if (*cur == e.value) {
      d.action = Action::Unchanged;
      d.reason += " (the container image or hook set the same value)";
    } else {
      d.reason += replaced;
    }
  } else if (e.mode == Mode::PrependPath && cur) {
    const std::string owner = from_container ? kByContainer : kByUser;
    const auto add = missing_dirs(*cur, e.value);
    if (add.empty())
      return {e.name, *cur, e.reason + " (already listed)", Action::Unchanged, owner};
    d.value = cur->empty() ? add : add + ":" + *cur;
    if (!cur->empty()) d.source += " + " + owner;
  } else if (cur && *cur == e.value) {
    d.action = Action::Unchanged;
  } else {
    d.reason += replaced;
  }
  return d;
}

std::vector<Decision> resolve(const std::vector<EnvEntry>& wanted, const EnvLookup& current,
                              const EnvLookup* submitted) {
  // Last entry per name wins, kept at the position of its first mention.
  std::vector<EnvEntry> merged;
  for (const auto& e : wanted) {
    auto it = std::find_if(merged.begin(), merged.end(),
                           [&](const EnvEntry& m) { return m.name == e.name; });
    if (it == merged.end())
      merged.push_back(e);
    else
      *it = e;
  }

  std::vector<std::string> ours;
  if (auto prev = current(kInjectedVar)) ours = split(*prev, ' ');
  auto was_ours = [&](const std::string& n) {
    return std::find(ours.begin(), ours.end(), n) != ours.end();
  };

  std::vector<Decision> out;
  std::string injected, image;
  for (const auto& e : merged) {
    if (!valid_env_name(e.name) || !valid_env_value(e.value) || e.name == kInjectedVar ||
        e.name == kImageVar) {
      out.push_back(
          {e.name, "", "refused: bad name or value " + quoted(e.value), Action::Rejected});
      continue;
    }
    Decision d = decide(e, current(e.name), was_ours(e.name), submitted);
    if (d.action == Action::Set || (d.action == Action::Unchanged && was_ours(e.name))) {
      if (!injected.empty()) injected += ' ';
      injected += e.name;
    }
    if (d.action == Action::KeptContainer) image += (image.empty() ? "" : " ") + e.name;
    out.push_back(std::move(d));
  }
  if (!image.empty())
    out.push_back({kImageVar, image, "names whose value is the container image's or hook's",
                   Action::Set, kByWireup});
  if (!injected.empty())
    out.push_back({kInjectedVar, injected, "names wireup set", Action::Set, kByWireup});
  return out;
}

}  // namespace

std::vector<Decision> resolve_env(const std::vector<EnvEntry>& wanted, const EnvLookup& current) {
  return resolve(wanted, current, nullptr);
}

std::vector<Decision> resolve_env(const std::vector<EnvEntry>& wanted, const EnvLookup& current,
                                  const EnvLookup& submitted) {
  return resolve(wanted, current, &submitted);
}

}  // namespace wireup
