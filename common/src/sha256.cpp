#include "wireup/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "wireup/error.hpp"

namespace wireup {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (impl_->ctx == nullptr || EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() { EVP_MD_CTX_free(impl_->ctx); }

void Sha256::update(const void* data, std::size_t size) {
  if (EVP_DigestUpdate(impl_->ctx, data, size) != 1)
    throw std::runtime_error("OpenSSL: SHA-256 update failed");
}

std::string Sha256::hex_digest() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, md, &len) != 1)
    throw std::runtime_error("OpenSSL: SHA-256 final failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::size_t{2} * len);
  for (unsigned int i = 0; i < len; ++i) {
    out += kHex[md[i] >> 4];
    out += kHex[md[i] & 15];
  }
  return out;
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.update(bytes.data(), bytes.size());
  return h.hex_digest();
}

std::string sha256_file(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw InputError(path.string() + ": cannot open for checksum: " + std::strerror(errno));
  // Large sequential reads: one request per MiBs on Lustre, not per page. A small
  // file gets a buffer of its size plus one (its end seen in the first read), and
  // the buffer is left unfilled: a data set or checkpoint of many small files does
  // not zero 8 MiB for each.
  constexpr std::size_t kMaxRead = std::size_t{8} << 20;
  struct stat st {};
  std::size_t size = kMaxRead;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0)
    size = std::min(kMaxRead, static_cast<std::size_t>(st.st_size) + 1);
  const auto buf = std::make_unique_for_overwrite<char[]>(size);
  Sha256 h;
  for (;;) {
    const ssize_t n = ::read(fd, buf.get(), size);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw InputError(path.string() + ": read error while checksumming: " + std::strerror(err));
    }
    if (n == 0) break;
    h.update(buf.get(), static_cast<std::size_t>(n));
  }
  ::close(fd);
  return h.hex_digest();
}

bool is_sha256_hex(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace wireup
