#include "wireup/data/shard_format.hpp"

#include <cstring>
#include <limits>

#include "wireup/error.hpp"

namespace wireup::data {
namespace {

// Fixed field offsets inside the header block (see docs/data-format.md).
constexpr std::size_t kOffVersion = 8;
constexpr std::size_t kOffTokenBytes = 12;
constexpr std::size_t kOffVocab = 16;
constexpr std::size_t kOffBos = 20;
constexpr std::size_t kOffEos = 24;
constexpr std::size_t kOffReserved = 28;
constexpr std::size_t kOffTokenCount = 32;
constexpr std::size_t kOffDocCount = 40;
constexpr std::size_t kOffTokensOffset = 48;
constexpr std::size_t kOffDocIndexOffset = 56;
constexpr std::size_t kFieldsEnd = 64;  // version 1
constexpr std::size_t kOffMaskOffset = 64;
constexpr std::size_t kOffTrainedCount = 72;
constexpr std::size_t kFieldsEndMasked = 80;  // version 2

void put32(unsigned char* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
void put64(unsigned char* p, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
std::uint32_t get32(const unsigned char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
std::uint64_t get64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw InputError(name + ": not a valid wireup token shard: " + what);
}

std::uint64_t index_offset(std::uint64_t tokens_offset, std::uint64_t count, std::uint32_t width) {
  const std::uint64_t end = tokens_offset + count * width;
  return (end + 7) / 8 * 8;
}

}  // namespace

std::uint32_t token_bytes_for_vocab(std::uint64_t vocab_size) {
  return vocab_size <= 65536 ? 2 : 4;
}

ShardHeader make_header(std::uint32_t vocab_size, std::uint32_t bos_id, std::uint32_t eos_id,
                        std::uint64_t token_count, std::uint64_t doc_count, bool masked,
                        std::uint64_t trained_count) {
  ShardHeader h;
  h.version = masked ? kShardVersionMasked : kShardVersion;
  h.token_bytes = token_bytes_for_vocab(vocab_size);
  h.vocab_size = vocab_size;
  h.bos_id = bos_id;
  h.eos_id = eos_id;
  h.token_count = token_count;
  h.doc_count = doc_count;
  h.tokens_offset = kShardHeaderBytes;
  h.doc_index_offset = index_offset(h.tokens_offset, token_count, h.token_bytes);
  if (masked) {
    h.mask_offset = h.doc_index_end();
    h.trained_count = trained_count;
  }
  return h;
}

std::array<unsigned char, kShardHeaderBytes> encode_header(const ShardHeader& h) {
  std::array<unsigned char, kShardHeaderBytes> b{};
  std::memcpy(b.data(), kShardMagic.data(), kShardMagic.size());
  put32(&b[kOffVersion], h.version);
  put32(&b[kOffTokenBytes], h.token_bytes);
  put32(&b[kOffVocab], h.vocab_size);
  put32(&b[kOffBos], h.bos_id);
  put32(&b[kOffEos], h.eos_id);
  put32(&b[kOffReserved], 0);
  put64(&b[kOffTokenCount], h.token_count);
  put64(&b[kOffDocCount], h.doc_count);
  put64(&b[kOffTokensOffset], h.tokens_offset);
  put64(&b[kOffDocIndexOffset], h.doc_index_offset);
  if (h.has_mask()) {
    put64(&b[kOffMaskOffset], h.mask_offset);
    put64(&b[kOffTrainedCount], h.trained_count);
  }
  return b;
}

ShardHeader decode_header(const unsigned char* data, std::uint64_t size, const std::string& name) {
  if (size < kShardHeaderBytes)
    bad(name, "file is " + std::to_string(size) + " bytes, shorter than the " +
                  std::to_string(kShardHeaderBytes) + "-byte header (truncated?)");
  if (std::memcmp(data, kShardMagic.data(), kShardMagic.size()) != 0)
    bad(name, "bad magic (expected \"WUTOKENS\" in the first 8 bytes)");
  ShardHeader h;
  h.version = get32(data + kOffVersion);
  if (h.version != kShardVersion && h.version != kShardVersionMasked)
    bad(name, "format version " + std::to_string(h.version) + " (this build reads versions " +
                  std::to_string(kShardVersion) + " and " + std::to_string(kShardVersionMasked) +
                  ")");
  h.token_bytes = get32(data + kOffTokenBytes);
  if (h.token_bytes != 2 && h.token_bytes != 4)
    bad(name, "token width " + std::to_string(h.token_bytes) + " (expected 2 or 4 bytes)");
  h.vocab_size = get32(data + kOffVocab);
  if (h.vocab_size == 0) bad(name, "vocabulary size 0");
  if (h.token_bytes == 2 && h.vocab_size > 65536)
    bad(name, "vocabulary size " + std::to_string(h.vocab_size) + " does not fit 2-byte tokens");
  h.bos_id = get32(data + kOffBos);
  h.eos_id = get32(data + kOffEos);
  for (const auto id : {h.bos_id, h.eos_id})
    if (id != kNoToken && id >= h.vocab_size)
      bad(name, "BOS/EOS id " + std::to_string(id) + " outside the vocabulary");
  h.token_count = get64(data + kOffTokenCount);
  h.doc_count = get64(data + kOffDocCount);
  h.tokens_offset = get64(data + kOffTokensOffset);
  h.doc_index_offset = get64(data + kOffDocIndexOffset);
  for (std::size_t i = kOffReserved; i < kOffReserved + 4; ++i)
    if (data[i] != 0) bad(name, "reserved header bytes are not zero");
  if (h.has_mask()) {
    h.mask_offset = get64(data + kOffMaskOffset);
    h.trained_count = get64(data + kOffTrainedCount);
  }
  for (std::size_t i = h.has_mask() ? kFieldsEndMasked : kFieldsEnd; i < kShardHeaderBytes; ++i)
    if (data[i] != 0) bad(name, "reserved header bytes are not zero");
  if (h.tokens_offset != kShardHeaderBytes)
    bad(name, "tokens offset " + std::to_string(h.tokens_offset) + " (expected 4096)");
  // Bound the counts before multiplying so a corrupt header cannot overflow.
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max() / 16;
  if (h.token_count > kMax || h.doc_count > kMax) bad(name, "token or document count too large");
  if (h.doc_count > h.token_count) bad(name, "more documents than tokens");
  if (h.doc_index_offset != index_offset(h.tokens_offset, h.token_count, h.token_bytes))
    bad(name, "document index offset " + std::to_string(h.doc_index_offset) +
                  " does not follow the " + std::to_string(h.token_count) + " tokens");
  if (h.has_mask()) {
    if (h.mask_offset != h.doc_index_end())
      bad(name, "mask offset " + std::to_string(h.mask_offset) +
                    " does not follow the document index (expected " +
                    std::to_string(h.doc_index_end()) + ")");
    if (h.trained_count > h.token_count) bad(name, "more trained tokens than tokens");
  }
  return h;
}

void check_shard_size(const ShardHeader& h, std::uint64_t actual_bytes, const std::string& name) {
  if (actual_bytes != h.file_bytes())
    throw InputError(name + ": file is " + std::to_string(actual_bytes) +
                     " bytes but its header describes " + std::to_string(h.file_bytes()) + " (" +
                     std::to_string(h.token_count) + " tokens, " + std::to_string(h.doc_count) +
                     " documents): truncated or overwritten");
}

}  // namespace wireup::data
