#include "wireup/data/shard_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::data {
namespace {

static_assert(std::endian::native == std::endian::little,
              "shards are little-endian and read as-is; add byte swapping for big-endian hosts");

[[noreturn]] void io_error(const std::filesystem::path& p, const std::string& what) {
  throw InputError(p.string() + ": " + what + ": " + std::strerror(errno));
}

constexpr std::size_t kScratchBytes = std::size_t{64} << 10;

// `count` little-endian tokens of `width` (2 or 4) bytes at `src` into `out`.
void decode(const unsigned char* src, unsigned width, std::uint64_t count, std::uint32_t* out) {
  for (std::uint64_t i = 0; i < count; ++i, src += width)
    out[i] = width == 2 ? std::uint32_t{src[0]} | std::uint32_t{src[1]} << 8
                        : std::uint32_t{src[0]} | std::uint32_t{src[1]} << 8 |
                              std::uint32_t{src[2]} << 16 | std::uint32_t{src[3]} << 24;
}

}  // namespace

ShardFile::ShardFile(const std::filesystem::path& path, ReadMode mode) : path_(path), mode_(mode) {
  // Non-blocking and checked on the descriptor: a FIFO or a device is refused,
  // never waited on. The size is checked against the header before anything
  // else is read, so nothing is sized by a count the file does not hold.
  auto file = io::open_regular(path, std::numeric_limits<std::uint64_t>::max());
  fd_ = file.fd.release();
  try {
    const std::uint64_t size = file.size;
    unsigned char head[kShardHeaderBytes] = {};
    const std::uint64_t want = std::min<std::uint64_t>(size, kShardHeaderBytes);
    read_bytes(0, want, head);
    header_ = decode_header(head, size, path.string());
    check_shard_size(header_, size, path.string());
    if (mode_ == ReadMode::Mmap) {
      void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd_, 0);
      if (p == MAP_FAILED) io_error(path, "cannot mmap shard");
      map_ = static_cast<const unsigned char*>(p);
      // Where the page cache holds the file in 2 MiB folios (ext4, xfs on
      // recent kernels), let them be mapped whole: random windows then miss
      // the TLB far less. Advice only; ignored where unsupported.
      ::madvise(p, size, MADV_HUGEPAGE);
    }
  } catch (...) {
    close();
    throw;
  }
}

ShardFile::~ShardFile() { close(); }

ShardFile::ShardFile(ShardFile&& other) noexcept
    : path_(std::move(other.path_)),
      mode_(other.mode_),
      fd_(std::exchange(other.fd_, -1)),
      map_(std::exchange(other.map_, nullptr)),
      header_(other.header_) {}

ShardFile& ShardFile::operator=(ShardFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    mode_ = other.mode_;
    fd_ = std::exchange(other.fd_, -1);
    map_ = std::exchange(other.map_, nullptr);
    header_ = other.header_;
  }
  return *this;
}

void ShardFile::close() noexcept {
  if (map_ != nullptr) ::munmap(const_cast<unsigned char*>(map_), header_.file_bytes());
  map_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void ShardFile::read_bytes(std::uint64_t offset, std::uint64_t size, void* out) const {
  if (map_ != nullptr) {
    std::memcpy(out, map_ + offset, size);
    return;
  }
  auto* p = static_cast<unsigned char*>(out);
  while (size > 0) {
    const ssize_t n = ::pread(fd_, p, size, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      io_error(path_, "read failed at byte " + std::to_string(offset));
    }
    if (n == 0)
      throw InputError(path_.string() + ": unexpected end of file at byte " +
                       std::to_string(offset) + " (file shrank while in use?)");
    p += n;
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::uint64_t>(n);
  }
}

void ShardFile::read_tokens(std::uint64_t first, std::uint64_t count, std::uint32_t* out) const {
  if (first > header_.token_count || count > header_.token_count - first)
    throw std::out_of_range(path_.string() + ": token range past the end of the shard");
  const std::uint64_t width = header_.token_bytes;
  const std::uint64_t base = header_.tokens_offset + first * width;
  if (map_ != nullptr) {
    decode(map_ + base, header_.token_bytes, count, out);
    return;
  }
  // pread in one request when it fits the scratch buffer (a window usually does).
  unsigned char scratch[kScratchBytes];
  const std::uint64_t per = kScratchBytes / width;
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(per, count - done);
    read_bytes(base + done * width, n * width, scratch);
    decode(scratch, header_.token_bytes, n, out + done);
    done += n;
  }
}

void ShardFile::read_raw(std::uint64_t first, std::uint64_t count, unsigned char* out) const {
  if (first > header_.token_count || count > header_.token_count - first)
    throw std::out_of_range(path_.string() + ": token range past the end of the shard");
  read_bytes(header_.tokens_offset + first * header_.token_bytes, count * header_.token_bytes, out);
}

void ShardFile::prefetch(std::uint64_t first, std::uint64_t count) const {
  if (map_ == nullptr || first >= header_.token_count) return;
  count = std::min(count, header_.token_count - first);
  const unsigned char* p = map_ + header_.tokens_offset + first * header_.token_bytes;
  // The head of the range only: once it streams in, the hardware prefetcher
  // follows, and prefetching a whole window would compete with the copy for
  // line-fill buffers.
  const unsigned char* end = p + std::min<std::uint64_t>(count * header_.token_bytes, 1024);
  for (; p < end; p += 64) __builtin_prefetch(p);
}

void ShardFile::readahead(std::uint64_t first, std::uint64_t count) const {
  if (first >= header_.token_count) return;
  count = std::min(count, header_.token_count - first);
  const std::uint64_t begin = header_.tokens_offset + first * header_.token_bytes;
  const std::uint64_t len = count * header_.token_bytes;
  // Advice only: failures change nothing but speed.
  if (map_ != nullptr) {
    const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t aligned = begin / page * page;
    ::madvise(const_cast<unsigned char*>(map_) + aligned, begin + len - aligned, MADV_WILLNEED);
  } else {
    ::posix_fadvise(fd_, static_cast<off_t>(begin), static_cast<off_t>(len), POSIX_FADV_WILLNEED);
  }
}

void ShardFile::read_mask(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const {
  if (first > header_.token_count || count > header_.token_count - first)
    throw std::out_of_range(path_.string() + ": mask range past the end of the shard");
  if (!header_.has_mask()) {
    std::memset(out, 1, count);
    return;
  }
  const std::uint64_t lo = first / 8, hi = (first + count + 7) / 8;
  unsigned char scratch[1024];
  for (std::uint64_t at = lo; at < hi; at += sizeof scratch) {
    const std::uint64_t n = std::min<std::uint64_t>(sizeof scratch, hi - at);
    const unsigned char* bits = scratch;
    if (map_ != nullptr)
      bits = map_ + header_.mask_offset + at;
    else
      read_bytes(header_.mask_offset + at, n, scratch);
    const std::uint64_t from = std::max(first, at * 8), to = std::min(first + count, (at + n) * 8);
    for (std::uint64_t t = from; t < to; ++t) out[t - first] = (bits[t / 8 - at] >> (t % 8)) & 1u;
  }
}

std::vector<std::uint64_t> ShardFile::doc_offsets() const {
  std::vector<std::uint64_t> v(header_.doc_count + 1);
  read_bytes(header_.doc_index_offset, v.size() * 8, v.data());
  if (v.front() != 0 || v.back() != header_.token_count)
    throw InputError(path_.string() + ": document index does not span tokens [0, " +
                     std::to_string(header_.token_count) + ")");
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] <= v[i - 1])
      throw InputError(path_.string() + ": document index entry " + std::to_string(i) +
                       " is not after the previous one (empty or reordered document)");
  return v;
}

}  // namespace wireup::data
