// libFuzzer target: a token shard's header and document index, as the
// loader and wireup-prep --verify read them, version 2 masks too (ShardFile over the bytes as a
// file, both read modes, then every token). Only returns or throws InputError.
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "fuzz_common.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_format.hpp"

using namespace wireup;

namespace {

// The input as a regular file in memory, opened by name as a reader would.
std::string as_file(const std::string& bytes) {
  static const int fd = ::memfd_create("fuzz-shard", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    __builtin_trap();
  return "/proc/self/fd/" + std::to_string(fd);
}

void read_all(const data::ShardFile& shard) {
  shard.doc_offsets();
  std::vector<std::uint32_t> buf(4096);
  std::vector<std::uint8_t> mask(4096);
  const auto n = shard.header().token_count;
  for (std::uint64_t at = 0; at < n; at += buf.size()) {
    shard.read_tokens(at, std::min<std::uint64_t>(buf.size(), n - at), buf.data());
    shard.read_mask(at, std::min<std::uint64_t>(mask.size(), n - at), mask.data());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  fuzz::expect_clean([&] {
    const auto h = data::decode_header(data, size, "shard.bin");
    data::check_shard_size(h, size, "shard.bin");
  });
  const std::string path = as_file(in);
  for (const auto mode : {data::ReadMode::Pread, data::ReadMode::Mmap})
    fuzz::expect_clean([&] { read_all(data::ShardFile(path, mode)); });
  return 0;
}
