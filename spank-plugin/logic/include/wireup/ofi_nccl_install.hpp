#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace wireup {

// A dotted release number: "1.16.2" -> {1, 16, 2}.
struct Version {
  int major = 0, minor = 0, patch = 0;
  auto operator<=>(const Version&) const = default;
  std::string str() const;
};

// "1.16", "1.16.2", "1.13.2-aws" (suffix ignored); nullopt for anything else.
std::optional<Version> parse_version(std::string_view text);

// aws-ofi-nccl's release, from bytes of its library: the build embeds its
// PACKAGE_STRING ("aws-ofi-nccl 1.16.2"), which it logs at NCCL init. nullopt
// when the bytes hold no such string (a git build says "aws-ofi-nccl git-...").
std::optional<Version> ofi_nccl_version_in(std::string_view bytes);

// What an aws-ofi-nccl install tree holds. Paths are as tasks see them.
struct OfiNcclInstall {
  std::string lib_dir;    // PREFIX/lib[/ARCH-linux-gnu] holding the net library
  std::string net_lib;    // libnccl-net-ofi.so (>= 1.15) or libnccl-net.so (older)
  std::string tuner_lib;  // separate libnccl-ofi-tuner.so (1.9 to 1.15 ship one)
  std::optional<Version> version;
  std::string version_source;  // where the version was read, for the notes
};

}  // namespace wireup
