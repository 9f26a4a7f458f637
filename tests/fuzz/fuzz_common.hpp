#pragma once
// What every libFuzzer target here checks: the reader given any bytes only
// returns or throws InputError; anything else (another exception, a crash,
// a sanitizer report, a hang past -timeout) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "wireup/error.hpp"

namespace wireup::fuzz {

template <typename F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const wireup::InputError&) {
  }
}

inline std::string as_string(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace wireup::fuzz
