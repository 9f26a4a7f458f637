#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "spank_api.hpp"

// Checked wrappers over the spank API: each failure is logged with the item
// or variable it concerns, and reported to the caller as nullopt/false.
namespace wireup::spank {

std::optional<std::string> get_env(spank_t sp, const char* name);
bool set_env(spank_t sp, const std::string& name, const std::string& value);
std::optional<std::uint32_t> get_u32(spank_t sp, spank_item_t item, const char* what);
std::optional<int> get_int(spank_t sp, spank_item_t item, const char* what);
// The job's environment (S_JOB_ENV) as NAME -> VALUE.
std::optional<std::map<std::string, std::string>> get_job_env(spank_t sp);

}  // namespace wireup::spank
