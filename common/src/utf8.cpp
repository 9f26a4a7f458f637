#include "wireup/utf8.hpp"

namespace wireup {

std::size_t utf8_sequence_length(const unsigned char* p, std::size_t n) {
  const unsigned c = p[0];
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c == 0xE0)
    len = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
    len = 3;
  else if (c == 0xED)
    len = 3, hi = 0x9F;
  else if (c == 0xF0)
    len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3)
    len = 4;
  else if (c == 0xF4)
    len = 4, hi = 0x8F;
  else
    return 0;
  if (len > n || p[1] < lo || p[1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if (p[k] < 0x80 || p[k] > 0xBF) return 0;
  return len;
}

std::optional<std::size_t> invalid_utf8_at(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  for (std::size_t i = 0; i < n;) {
    const std::size_t len = utf8_sequence_length(p + i, n - i);
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;
}

}  // namespace wireup
