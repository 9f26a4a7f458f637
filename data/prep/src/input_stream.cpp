#include "wireup/prep/input_stream.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::prep {
namespace {

// zlib reads plain files as they are and gzip'd ones decompressed.
class GzipStream final : public InputStream {
 public:
  explicit GzipStream(const std::filesystem::path& path) : path_(path) {
    errno = 0;
    gz_ = gzopen(path.c_str(), "rb");
    if (gz_ == nullptr)
      throw InputError(path.string() +
                       ": cannot open: " + (errno != 0 ? std::strerror(errno) : "out of memory"));
    gzbuffer(gz_, 1 << 18);
  }
  ~GzipStream() override { gzclose_r(gz_); }
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  std::size_t read(char* out, std::size_t size) override {
    const auto want = static_cast<unsigned>(std::min<std::size_t>(size, 1u << 30));
    const int n = gzread(gz_, out, want);
    int code = 0;
    if (n < 0) {
      const char* msg = gzerror(gz_, &code);
      throw InputError(path_.string() + ": read error at uncompressed byte " + at() + ": " +
                       (code == Z_ERRNO ? std::strerror(errno) : without_path(msg)));
    }
    // A truncated stream: zlib reports it on the read that returns the last good bytes, and
    // from 1.3.2 clears it before the next read (which then looks like a clean end), so
    // every read is checked, not only the one that returns 0.
    const char* msg = gzerror(gz_, &code);
    if (code != Z_OK && code != Z_STREAM_END)
      throw InputError(path_.string() + ": gzip data error at uncompressed byte " + at() + ": " +
                       without_path(msg) + " (truncated download?)");
    return static_cast<std::size_t>(n);
  }

  std::uint64_t raw_offset() const override {
    const auto off = gzoffset(gz_);
    return off < 0 ? 0 : static_cast<std::uint64_t>(off);
  }

 private:
  // zlib's messages start with the path it was given.
  std::string without_path(const char* msg) const {
    const std::string m = msg, prefix = path_.string() + ": ";
    return m.compare(0, prefix.size(), prefix) == 0 ? m.substr(prefix.size()) : m;
  }
  std::string at() const { return std::to_string(std::max<z_off_t>(gztell(gz_), 0)); }

  std::filesystem::path path_;
  gzFile gz_ = nullptr;
};

// One or more zstd frames (skippable ones included) back to back, streamed:
// memory is the window (at most 2^kMaxZstdWindowLog) plus fixed buffers.
class ZstdStream final : public InputStream {
 public:
  ZstdStream(const std::filesystem::path& path, int fd)
      : path_(path), fd_(fd), in_buf_(ZSTD_DStreamInSize()) {
    dctx_ = ZSTD_createDCtx();
    if (dctx_ == nullptr) {
      ::close(fd_);
      throw InputError(path.string() + ": cannot start zstd decompression: out of memory");
    }
    ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kMaxZstdWindowLog);
  }
  ~ZstdStream() override {
    ZSTD_freeDCtx(dctx_);
    ::close(fd_);
  }
  ZstdStream(const ZstdStream&) = delete;
  ZstdStream& operator=(const ZstdStream&) = delete;

  std::size_t read(char* out, std::size_t size) override {
    ZSTD_outBuffer o{out, size, 0};
    while (o.pos == 0 && size > 0) {
      if (in_.pos == in_.size && !file_end_) fill();
      // Output left in the decoder from a call that filled its buffer
      // comes out even with no more input.
      const bool pending = out_was_full_ && !frame_done_;
      if (in_.pos == in_.size && file_end_ && !pending) {
        if (!frame_done_)
          throw InputError(path_.string() + ": zstd data error at uncompressed byte " +
                           std::to_string(produced_) + ": the file ends inside the frame that " +
                           "starts at compressed byte " + std::to_string(frame_start_) + " of " +
                           std::to_string(read_) + " (truncated download?)");
        return 0;
      }
      if (frame_done_) frame_start_ = raw_offset();
      const std::size_t ret = ZSTD_decompressStream(dctx_, &o, &in_);
      produced_ += o.pos;  // o.pos is 0 before each call: the loop ends on output
      if (ZSTD_isError(ret) != 0) fail(ret);
      frame_done_ = ret == 0;
      out_was_full_ = o.pos == o.size;
    }
    return o.pos;
  }

  std::uint64_t raw_offset() const override { return read_ - (in_.size - in_.pos); }

 private:
  void fill() {
    ssize_t n = 0;
    do {
      n = ::read(fd_, in_buf_.data(), in_buf_.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0)
      throw InputError(path_.string() + ": read error at byte " + std::to_string(read_) + ": " +
                       std::strerror(errno));
    in_ = {in_buf_.data(), static_cast<std::size_t>(n), 0};
    read_ += static_cast<std::uint64_t>(n);
    file_end_ = n == 0;
  }

  [[noreturn]] void fail(std::size_t ret) const {
    const std::string where = path_.string() + ": zstd data error at uncompressed byte " +
                              std::to_string(produced_) + " (in the frame that starts at " +
                              "compressed byte " + std::to_string(frame_start_) + "): ";
    if (ZSTD_getErrorCode(ret) == ZSTD_error_frameParameter_windowTooLarge)
      throw InputError(where + "a frame needs a window larger than " +
                       std::to_string((1u << kMaxZstdWindowLog) >> 20) +
                       " MiB (compressed with --long or --ultra?); decompress it first, e.g. "
                       "zstd -d --memory=2048MB");
    throw InputError(where + ZSTD_getErrorName(ret) + " (corrupt or not a zstd file?)");
  }

  std::filesystem::path path_;
  int fd_ = -1;
  ZSTD_DCtx* dctx_ = nullptr;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  std::uint64_t read_ = 0;         // bytes read from the file
  bool file_end_ = false;          // read() returned 0
  bool frame_done_ = true;         // the last call ended a frame (or none began)
  bool out_was_full_ = false;      // the last call filled its output: more may be buffered
  std::uint64_t produced_ = 0;     // uncompressed bytes returned
  std::uint64_t frame_start_ = 0;  // compressed offset of the current frame
};

bool name_ends_with(const std::filesystem::path& p, const std::string& suffix) {
  const std::string n = to_lower(p.filename().string());
  return n.size() >= suffix.size() &&
         n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string hex_bytes(const unsigned char* b, std::size_t n) {
  if (n == 0) return "none: the file is empty";
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += ' ';
    s += digits[b[i] >> 4];
    s += digits[b[i] & 15];
  }
  return s;
}

}  // namespace

Compression compression_from_magic(const unsigned char* b, std::size_t size) {
  if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b) return Compression::Gzip;
  if (size < 4) return Compression::None;
  const std::uint32_t magic = b[0] | (b[1] << 8) | (b[2] << 16) | (std::uint32_t{b[3]} << 24);
  if (magic == ZSTD_MAGICNUMBER ||
      (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START)
    return Compression::Zstd;
  return Compression::None;
}

std::unique_ptr<InputStream> InputStream::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path.string() + ": cannot open: " + std::strerror(errno));
  unsigned char head[4] = {};
  ssize_t n = 0;
  do {
    n = ::pread(fd, head, sizeof head, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    const int err = errno;
    ::close(fd);
    throw InputError(path.string() + ": cannot read: " + std::strerror(err));
  }
  const auto got = static_cast<std::size_t>(n);
  const Compression c = compression_from_magic(head, got);
  // A compressed name promises compressed bytes: an empty or truncated
  // download, or a mislabelled file, is an error rather than plain text.
  for (const auto& [suffix, expected, what] :
       {std::tuple{".zst", Compression::Zstd, "zstd (28 b5 2f fd)"},
        std::tuple{".gz", Compression::Gzip, "gzip (1f 8b)"}}) {
    if (name_ends_with(path, suffix) && c != expected) {
      ::close(fd);
      throw InputError(path.string() + ": named " + suffix + " but does not start like " + what +
                       " data (first bytes: " + hex_bytes(head, got) +
                       "); a truncated download or a mislabelled file?");
    }
  }
  if (c == Compression::Zstd) return std::make_unique<ZstdStream>(path, fd);
  ::close(fd);
  return std::make_unique<GzipStream>(path);
}

}  // namespace wireup::prep
