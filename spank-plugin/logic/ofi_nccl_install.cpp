#include "wireup/ofi_nccl_install.hpp"

#include <cctype>

#include "wireup/text.hpp"

namespace wireup {
namespace {

constexpr std::string_view kTag = "aws-ofi-nccl ";

}  // namespace

std::string Version::str() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::optional<Version> parse_version(std::string_view text) {
  Version v;
  int* parts[] = {&v.major, &v.minor, &v.patch};
  std::size_t i = 0;
  int count = 0;
  while (count < 3) {
    const std::size_t start = i;
    while (i < text.size() && i - start < 6 && std::isdigit(static_cast<unsigned char>(text[i])))
      ++i;
    if (i == start) return std::nullopt;  // "1." or "1.x"
    *parts[count++] = std::stoi(std::string(text.substr(start, i - start)));
    if (count == 3 || i >= text.size() || text[i] != '.') break;
    ++i;
  }
  if (count < 2) return std::nullopt;
  // What follows must not continue the number ("1.16x" is not a version).
  if (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) return std::nullopt;
  return v;
}

std::optional<Version> ofi_nccl_version_in(std::string_view bytes) {
  for (auto at = bytes.find(kTag); at != std::string_view::npos; at = bytes.find(kTag, at + 1)) {
    auto rest = bytes.substr(at + kTag.size(), 24);
    if (auto v = parse_version(rest)) return v;
  }
  return std::nullopt;
}

}  // namespace wireup
