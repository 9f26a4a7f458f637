// escape_text: every byte of a text on one line (wireup-prep inspect, the job epilog's log).
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "wireup/text.hpp"
#include "wireup/utf8.hpp"

namespace {

// The inverse of escape_text, to show that it loses nothing.
std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    const char k = s.at(++i);
    if (k == 'n') {
      out += '\n';
    } else if (k == 't') {
      out += '\t';
    } else if (k == 'r') {
      out += '\r';
    } else if (k == 'x') {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else if (k == 'u') {
      const auto cp = static_cast<unsigned>(std::stoi(s.substr(i + 1, 4), nullptr, 16));
      i += 4;
      if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
      } else {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      }
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += k;  // \\ and \"
    }
  }
  return out;
}

}  // namespace

TEST_CASE("escape_text shows every byte on one line and loses nothing") {
  CHECK(wireup::escape_text("plain text, 123") == "plain text, 123");
  CHECK(wireup::escape_text("a\nb\tc\r") == "a\\nb\\tc\\r");
  CHECK(wireup::escape_text("back\\slash \"q\"") == "back\\\\slash \\\"q\\\"");
  CHECK(wireup::escape_text(std::string("\x00\x01\x1b[31m\x7f", 8)) == "\\x00\\x01\\x1b[31m\\x7f");
  CHECK(wireup::escape_text("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(wireup::escape_text("\xff|\xe2\x82|\xc0\xaf|\xed\xa0\x80") ==
        "\\xff|\\xe2\\x82|\\xc0\\xaf|\\xed\\xa0\\x80");  // invalid, cut, overlong, surrogate
  CHECK(wireup::escape_text("\xc2\x85|\xe2\x80\xae|\xe2\x80\xa8|\xe2\x81\xa6") ==
        "\\u0085|\\u202e|\\u2028|\\u2066");  // C1, bidi override, line separator, isolate

  std::mt19937 rng(7);
  for (int round = 0; round < 3000; ++round) {
    std::string s(rng() % 24, '\0');
    for (auto& c : s) {
      // Mostly the interesting bytes: controls, UTF-8 lead and continuation bytes.
      const unsigned pick = rng() % 4;
      c = static_cast<char>(pick == 0   ? rng() % 0x20
                            : pick == 1 ? 0x80 + rng() % 0x80
                                        : (pick == 2 ? "\\\"a\xe2\x80\xae"[rng() % 6] : rng()));
    }
    const auto e = wireup::escape_text(s);
    INFO("round " << round);
    CHECK(unescape(e) == s);
    CHECK_FALSE(wireup::invalid_utf8_at(e).has_value());
    for (const unsigned char c : e) CHECK((c >= 0x20 && c != 0x7f));
    CHECK(e.find("\xe2\x80\xae") == std::string::npos);
  }
}
