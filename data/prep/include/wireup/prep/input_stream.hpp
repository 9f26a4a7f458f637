#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace wireup::prep {

enum class Compression { None, Gzip, Zstd };

// What the first bytes of a file say it holds: gzip (1f 8b), a zstd frame
// (28 b5 2f fd) or a zstd skippable frame (5? 2a 4d 18); anything else, and
// fewer than 4 bytes, is None.
Compression compression_from_magic(const unsigned char* bytes, std::size_t size);

// The uncompressed bytes of one input file, plain, gzip'd or zstd-compressed
// (chosen from the bytes, not the name; a name ending in .zst whose bytes are
// not zstd is an error). Memory is bounded whatever the file declares: zstd
// frames may use a window of at most kMaxZstdWindowLog (zstd's own default
// limit), and output goes straight into the caller's buffer.
class InputStream {
 public:
  static constexpr int kMaxZstdWindowLog = 27;  // 128 MiB

  virtual ~InputStream() = default;
  // Opens `path`; InputError naming it when it cannot be read.
  static std::unique_ptr<InputStream> open(const std::filesystem::path& path);

  // Up to `size` bytes into `out`; 0 only at the end of the data. A data
  // error (corrupt or truncated stream) is an InputError naming the file and
  // where (the uncompressed byte; for zstd, the compressed offset of the frame).
  virtual std::size_t read(char* out, std::size_t size) = 0;
  // Bytes consumed from the file on disk (compressed), for progress.
  virtual std::uint64_t raw_offset() const = 0;
};

}  // namespace wireup::prep
