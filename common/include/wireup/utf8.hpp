#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

namespace wireup {

// Length of the valid UTF-8 sequence at p[0..n) (n >= 1), 0 when there is none:
// no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF.
std::size_t utf8_sequence_length(const unsigned char* p, std::size_t n);
// Byte offset of the first invalid UTF-8 sequence, or nullopt.
std::optional<std::size_t> invalid_utf8_at(std::string_view s);

}  // namespace wireup
