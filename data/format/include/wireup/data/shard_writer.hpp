#pragma once
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "wireup/data/shard_format.hpp"

namespace wireup::data {

// Streams documents into one shard file. The header is written last, so a
// shard whose writer died is never valid; callers still write under a
// temporary name and rename (see wireup-prep's staging directory).
class ShardWriter {
 public:
  // Creates or truncates `path`. Ids must be < vocab_size; bos/eos are only
  // recorded in the header (the caller adds them to each document).
  // With `masked`, a version 2 shard: every document comes with its loss mask.
  ShardWriter(std::filesystem::path path, std::uint32_t vocab_size, std::uint32_t bos_id = kNoToken,
              std::uint32_t eos_id = kNoToken, bool masked = false);
  ~ShardWriter();  // removes the file unless finish() succeeded
  ShardWriter(const ShardWriter&) = delete;
  ShardWriter& operator=(const ShardWriter&) = delete;

  // One document; it must not be empty. A masked shard takes the mask too
  // (one value per token, non-zero: trained); an unmasked one refuses it.
  void add_document(std::span<const std::uint32_t> tokens, std::span<const std::uint8_t> mask = {});

  // Writes the document index and the header, fsyncs and closes.
  // Returns the SHA-256 of the whole file.
  std::string finish();

  std::uint64_t token_count() const { return tokens_; }
  std::uint64_t doc_count() const { return doc_starts_.size(); }
  std::uint64_t trained_count() const { return trained_; }
  std::uint64_t file_bytes() const { return header_.file_bytes(); }  // after finish()
  const std::filesystem::path& path() const { return path_; }

 private:
  void write_all(const void* data, std::size_t size);
  void flush();

  std::filesystem::path path_;
  int fd_ = -1;
  bool finished_ = false;
  ShardHeader header_;
  std::uint64_t tokens_ = 0;
  std::vector<std::uint64_t> doc_starts_;
  bool masked_ = false;
  std::uint64_t trained_ = 0;
  std::vector<std::uint8_t> mask_bits_;  // held until finish(): an eighth of a byte a token
  std::vector<unsigned char> buf_;
};

}  // namespace wireup::data
