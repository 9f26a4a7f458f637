#pragma once
#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace wireup {

// Incremental SHA-256 (OpenSSL). Hex digests match `sha256sum`, so users can
// check a shard against manifest.json by hand.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, std::size_t size);
  // Lowercase hex; the object cannot be updated afterwards.
  std::string hex_digest();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string sha256_hex(std::string_view bytes);
// Throws InputError naming `path` when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);
bool is_sha256_hex(std::string_view s);

}  // namespace wireup
