#pragma once
#include <map>
#include <string>

#include "wireup/env_plan.hpp"

// A task environment as a map, for the EnvLookup the planners take.
inline wireup::EnvLookup lookup(const std::map<std::string, std::string>& env) {
  return [env](const std::string& n) -> std::optional<std::string> {
    auto it = env.find(n);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

inline const wireup::Decision* find(const std::vector<wireup::Decision>& ds,
                                    const std::string& name) {
  for (const auto& d : ds)
    if (d.name == name) return &d;
  return nullptr;
}
