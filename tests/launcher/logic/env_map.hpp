#pragma once
#include <map>
#include <optional>
#include <string>

#include "wireup/env_plan.hpp"

// A fake environment for parsers that take an EnvLookup.
inline wireup::EnvLookup env_of(const std::map<std::string, std::string>& m) {
  return [m](const std::string& k) -> std::optional<std::string> {
    auto it = m.find(k);
    if (it == m.end()) return std::nullopt;
    return it->second;
  };
}
