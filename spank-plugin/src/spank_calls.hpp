#pragma once
#include "spank_api.hpp"

#include <cstdint>
#include <optional>
#include <string>

// Checked wrappers over the spank API: each failure is logged with the item
// or variable it concerns, and reported to the caller as nullopt/false.
namespace wireup::spank {

std::optional<std::string> get_env(spank_t sp, const char* name);
bool set_env(spank_t sp, const std::string& name, const std::string& value);
std::optional<std::uint32_t> get_u32(spank_t sp, spank_item_t item, const char* what);
std::optional<int> get_int(spank_t sp, spank_item_t item, const char* what);

}  // namespace wireup::spank
