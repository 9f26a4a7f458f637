#include "wireup/tokenizer/tiktoken_file.hpp"

#include <array>
#include <charconv>
#include <cstdint>
#include <unordered_set>

#include "wireup/error.hpp"

namespace wireup::tokenizer {
namespace {

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// One line split at its only space: base64 and decimal rank.
bool split_line(std::string_view line, std::string_view& b64, std::uint64_t& rank) {
  const auto space = line.find(' ');
  if (space == std::string_view::npos || space == 0 || space + 1 >= line.size()) return false;
  b64 = line.substr(0, space);
  const auto digits = line.substr(space + 1);
  if (digits.size() > 10) return false;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), rank);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    std::array<int, 4> v{};
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
        v[k] = 0;
        continue;
      }
      if (pad > 0) return std::nullopt;  // data after padding
      v[k] = b64_value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const unsigned n = (static_cast<unsigned>(v[0]) << 18) | (static_cast<unsigned>(v[1]) << 12) |
                       (static_cast<unsigned>(v[2]) << 6) | static_cast<unsigned>(v[3]);
    out.push_back(static_cast<char>(n >> 16));
    if (pad < 2) out.push_back(static_cast<char>((n >> 8) & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(n & 0xFF));
  }
  return out;
}

bool looks_like_tiktoken(std::string_view content) {
  const auto line = content.substr(0, content.find('\n'));
  std::string_view b64;
  std::uint64_t rank = 0;
  return split_line(line, b64, rank) && base64_decode(b64).has_value();
}

std::vector<std::string> parse_tiktoken(std::string_view content, const std::string& name) {
  std::vector<std::string> tokens;
  std::unordered_set<std::string_view> seen;
  std::size_t at = 0, line_no = 0;
  const auto fail = [&](const std::string& what) {
    throw InputError(name + ":" + std::to_string(line_no) + ": " + what +
                     "; expected a tiktoken BPE file, one 'base64(token) rank' line per token "
                     "with ranks 0, 1, 2, ...");
  };
  while (at < content.size()) {
    auto end = content.find('\n', at);
    if (end == std::string_view::npos) end = content.size();
    const auto line = content.substr(at, end - at);
    at = end + 1;
    ++line_no;
    if (line.empty()) {
      if (at >= content.size()) break;  // the final newline
      fail("empty line");
    }
    std::string_view b64;
    std::uint64_t rank = 0;
    if (!split_line(line, b64, rank)) fail("not 'base64 rank'");
    auto bytes = base64_decode(b64);
    if (!bytes) fail("bad base64 '" + std::string(b64.substr(0, 40)) + "'");
    if (rank != tokens.size())
      fail("rank " + std::to_string(rank) + " where " + std::to_string(tokens.size()) +
           " was expected");
    tokens.push_back(std::move(*bytes));
  }
  if (tokens.empty()) throw InputError(name + ": no tokens (an empty tiktoken file)");
  seen.reserve(tokens.size());
  for (std::size_t r = 0; r < tokens.size(); ++r)
    if (!seen.insert(tokens[r]).second) {
      line_no = r + 1;
      fail("token of rank " + std::to_string(r) + " listed twice");
    }
  return tokens;
}

}  // namespace wireup::tokenizer
