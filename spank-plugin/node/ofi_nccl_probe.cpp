#include "ofi_nccl_probe.hpp"

// Plain POSIX and stdio: this runs inside slurmstepd for every step.
#include <sys/stat.h>

#include <cstdio>

namespace wireup::spank {
namespace {

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
  }
  // The tuner: the per-architecture copy first, then lib/ itself (older trees).
  for (const char* sub : {"/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu", "/lib"}) {
    const std::string tuner = prefix + sub + "/libnccl-ofi-tuner.so";
    if (present(root + tuner)) {
      in.tuner_lib = tuner;
      break;
    }
  }
  if (in.lib_dir.empty() && present(root + prefix + "/lib")) in.lib_dir = prefix + "/lib";
  if (read_version && !in.net_lib.empty()) {
    in.version = version_in_file(root + in.net_lib);
    if (in.version) in.version_source = in.net_lib;
  }
  return in;
}

}  // namespace wireup::spank
