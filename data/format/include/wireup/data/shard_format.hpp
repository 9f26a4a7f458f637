#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace wireup::data {

// Token shard file, format versions 1 and 2. docs/data-format.md has the
// layout byte by byte; in short:
//   [0, 4096)                 header block (fields below, then zeros)
//   [4096, +count*width)      tokens, little-endian uint16 or uint32
//   [doc_index_offset, +8*(doc_count+1))  uint64 token offsets of document starts
//   version 2 only: [mask_offset, +ceil(count/8))  the loss mask, one bit per
//                             token (bit i%8 of byte i/8: token i is trained)
// The index and the mask sit after the tokens so a writer can stream tokens
// and write the header last. Version 2 keeps every field of version 1 at its
// offset and adds mask_offset (64) and trained_count (72).
inline constexpr std::array<char, 8> kShardMagic = {'W', 'U', 'T', 'O', 'K', 'E', 'N', 'S'};
inline constexpr std::uint32_t kShardVersion = 1;        // tokens and documents
inline constexpr std::uint32_t kShardVersionMasked = 2;  // ... and a loss mask
inline constexpr std::uint64_t kShardHeaderBytes = 4096;
inline constexpr std::uint32_t kNoToken = 0xFFFFFFFFu;  // bos_id/eos_id: none

struct ShardHeader {
  std::uint32_t version = kShardVersion;
  std::uint32_t token_bytes = 2;  // 2 or 4
  std::uint32_t vocab_size = 0;   // every token is < vocab_size
  std::uint32_t bos_id = kNoToken;
  std::uint32_t eos_id = kNoToken;
  std::uint64_t token_count = 0;
  std::uint64_t doc_count = 0;
  std::uint64_t tokens_offset = kShardHeaderBytes;
  std::uint64_t doc_index_offset = 0;
  std::uint64_t mask_offset = 0;    // version 2: right after the document index; else 0
  std::uint64_t trained_count = 0;  // version 2: tokens whose mask bit is set

  bool has_mask() const { return version == kShardVersionMasked; }
  std::uint64_t doc_index_end() const { return doc_index_offset + (doc_count + 1) * 8; }
  // The exact size a file with this header must have.
  std::uint64_t file_bytes() const {
    return has_mask() ? mask_offset + (token_count + 7) / 8 : doc_index_end();
  }
  bool operator==(const ShardHeader&) const = default;
};

// uint16 tokens while every id fits, else uint32.
std::uint32_t token_bytes_for_vocab(std::uint64_t vocab_size);

// Fills in tokens_offset and doc_index_offset (index aligned to 8 bytes);
// with `masked`, version 2 with mask_offset after the index and
// `trained_count`.
ShardHeader make_header(std::uint32_t vocab_size, std::uint32_t bos_id, std::uint32_t eos_id,
                        std::uint64_t token_count, std::uint64_t doc_count, bool masked = false,
                        std::uint64_t trained_count = 0);

std::array<unsigned char, kShardHeaderBytes> encode_header(const ShardHeader& h);

// Parses the header block and checks it is self-consistent; `name` (the
// file) starts every error message. Does not look at the file size.
ShardHeader decode_header(const unsigned char* data, std::uint64_t size, const std::string& name);

// InputError naming `name` unless `actual_bytes` is exactly h.file_bytes().
void check_shard_size(const ShardHeader& h, std::uint64_t actual_bytes, const std::string& name);

}  // namespace wireup::data
