#include <cstdint>
#include <cstdio>
#include <string>

#include "wireup/text.hpp"
#include "wireup/utf8.hpp"

namespace wireup {
namespace {

std::uint32_t code_point(const unsigned char* p, std::size_t len) {
  if (len == 1) return p[0];
  std::uint32_t cp = p[0] & (0x7F >> len);
  for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[k] & 0x3F);
  return cp;
}

bool invisible_control(std::uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) || cp == 0x200E || cp == 0x200F || cp == 0x2028 ||
         cp == 0x2029 || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

std::string hex(const char* format, unsigned value) {
  char buf[16];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

std::string escape_text(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const std::size_t n = text.size();
  std::string out;
  out.reserve(n);
  for (std::size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      out += hex("\\x%02x", c);
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else {
      const std::size_t len = utf8_sequence_length(p + i, n - i);
      if (len == 0) {
        out += hex("\\x%02x", c);
        ++i;
        continue;
      }
      const auto cp = code_point(p + i, len);
      if (invisible_control(cp))
        out += hex("\\u%04x", cp);
      else
        out.append(text.substr(i, len));
      i += len;
      continue;
    }
    ++i;
  }
  return out;
}

}  // namespace wireup
