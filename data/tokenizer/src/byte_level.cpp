#include "wireup/tokenizer/byte_level.hpp"

#include <array>
#include <cstdint>

namespace wireup::tokenizer {
namespace {

struct ByteMap {
  std::array<std::uint16_t, 256> code{};  // byte -> code point
  std::array<std::int16_t, 324> byte{};   // code point -> byte, -1: none
  ByteMap() {
    byte.fill(-1);
    unsigned extra = 0;
    for (unsigned b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
      code[b] = static_cast<std::uint16_t>(printable ? b : 256 + extra++);
      byte[code[b]] = static_cast<std::int16_t>(b);
    }
  }
};

const ByteMap& byte_map() {
  static const ByteMap m;
  return m;
}

}  // namespace

std::string bytes_to_unicode(std::string_view bytes) {
  const auto& m = byte_map();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) {
    const unsigned cp = m.code[static_cast<unsigned char>(c)];
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else {  // every code point of the map is below U+0800: two bytes
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

std::optional<std::string> unicode_to_bytes(std::string_view text) {
  const auto& m = byte_map();
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c0 = static_cast<unsigned char>(text[i]);
    unsigned cp = 0;
    if (c0 < 0x80) {
      cp = c0;
      i += 1;
    } else if ((c0 & 0xE0) == 0xC0 && i + 1 < text.size() &&
               (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      cp = ((c0 & 0x1Fu) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3Fu);
      if (cp < 0x80) return std::nullopt;  // overlong
      i += 2;
    } else {
      return std::nullopt;  // a longer sequence is outside the map anyway
    }
    if (cp >= m.byte.size() || m.byte[cp] < 0) return std::nullopt;
    out.push_back(static_cast<char>(m.byte[cp]));
  }
  return out;
}

}  // namespace wireup::tokenizer
