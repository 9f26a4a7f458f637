#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wireup/data/shard_format.hpp"

namespace wireup::data {

// How tokens come off the file system. Mmap lets the page cache serve
// repeated reads without a syscall; Pread issues one read per window, which
// keeps Lustre/FSx requests the size of the window and uses no address space.
enum class ReadMode { Mmap, Pread };

// One opened, header-checked shard. read_tokens is const and thread-safe.
class ShardFile {
 public:
  // Opens `path`, decodes the header and checks the file size against it.
  ShardFile(const std::filesystem::path& path, ReadMode mode);
  ~ShardFile();
  ShardFile(ShardFile&& other) noexcept;
  ShardFile& operator=(ShardFile&& other) noexcept;
  ShardFile(const ShardFile&) = delete;
  ShardFile& operator=(const ShardFile&) = delete;

  const ShardHeader& header() const { return header_; }
  const std::filesystem::path& path() const { return path_; }
  std::uint64_t file_bytes() const { return header_.file_bytes(); }

  // Copies tokens [first, first+count) as token ids.
  void read_tokens(std::uint64_t first, std::uint64_t count, std::uint32_t* out) const;
  // The same tokens as stored: count * token_bytes little-endian bytes.
  void read_raw(std::uint64_t first, std::uint64_t count, unsigned char* out) const;

  // The stored tokens in the mapping (token i at mapped_tokens() + i *
  // token_bytes), or null under ReadMode::Pread.
  const unsigned char* mapped_tokens() const {
    return map_ != nullptr ? map_ + header_.tokens_offset : nullptr;
  }

  // Hints that tokens [first, first+count) are read next: with Mmap, pulls
  // their first cache lines in (random windows defeat the hardware prefetcher).
  void prefetch(std::uint64_t first, std::uint64_t count) const;

  // Asks the kernel to start reading tokens [first, first+count) from the
  // file system now (madvise/posix_fadvise WILLNEED), so reads that follow
  // find them in the page cache: on FSx/Lustre this turns one round trip
  // per window into many in flight. A syscall each: off for local disks.
  void readahead(std::uint64_t first, std::uint64_t count) const;

  // The loss mask of tokens [first, first+count), one byte each (1: trained,
  // 0: not); all 1 for a shard without a mask (version 1).
  void read_mask(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const;

  // Document start offsets plus the closing token count, checked to start at 0,
  // never decrease and end at token_count.
  std::vector<std::uint64_t> doc_offsets() const;

 private:
  void read_bytes(std::uint64_t offset, std::uint64_t size, void* out) const;
  void close() noexcept;

  std::filesystem::path path_;
  ReadMode mode_ = ReadMode::Pread;
  int fd_ = -1;
  const unsigned char* map_ = nullptr;
  ShardHeader header_;
};

}  // namespace wireup::data
