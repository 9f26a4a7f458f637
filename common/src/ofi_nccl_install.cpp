#include "wireup/ofi_nccl_install.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cstdio>

#include "wireup/text.hpp"

namespace wireup {
namespace {

constexpr std::string_view kTag = "aws-ofi-nccl ";
constexpr std::size_t kMaxScan = 64u << 20;

bool present(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Scans a file for the embedded version in chunks that overlap by the
// longest string looked for, so a match across a chunk edge is not missed.
std::optional<Version> version_in_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rbe");
  if (f == nullptr) return std::nullopt;
  constexpr std::size_t kChunk = 1u << 20, kOverlap = 64;
  std::string buf;
  std::optional<Version> found;
  std::size_t total = 0;
  std::string chunk(kChunk, '\0');
  while (!found && total < kMaxScan) {
    const std::size_t n = std::fread(chunk.data(), 1, kChunk, f);
    if (n == 0) break;
    total += n;
    buf.append(chunk.data(), n);
    found = ofi_nccl_version_in(buf);
    if (buf.size() > kOverlap) buf.erase(0, buf.size() - kOverlap);
  }
  std::fclose(f);
  return found;
}

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

OfiNcclInstall probe_ofi_nccl(const std::string& sysroot, const std::string& prefix,
                              bool read_version) {
  const std::string root = sysroot == "/" ? "" : sysroot;
  OfiNcclInstall in;
  for (const char* sub : {"/lib", "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu"}) {
    const std::string dir = prefix + sub;
    for (const char* name : {"libnccl-net-ofi.so", "libnccl-net.so"}) {
      if (in.net_lib.empty() && present(root + dir + "/" + name)) {
        in.lib_dir = dir;
        in.net_lib = dir + "/" + name;
      }
    }
    if (in.tuner_lib.empty() && present(root + dir + "/libnccl-ofi-tuner.so"))
      in.tuner_lib = dir + "/libnccl-ofi-tuner.so";
  }
  if (in.lib_dir.empty() && present(root + prefix + "/lib")) in.lib_dir = prefix + "/lib";
  if (read_version && !in.net_lib.empty()) {
    in.version = version_in_file(root + in.net_lib);
    if (in.version) in.version_source = in.net_lib;
  }
  return in;
}

}  // namespace wireup
