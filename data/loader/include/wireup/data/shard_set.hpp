#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_file.hpp"

namespace wireup::data {

// How much of the data each rank checks when it opens a split. Sizes and
// headers are always checked against the manifest; the SHA-256 of a shard
// needs a full read of it.
enum class Verify {
  All,          // every rank checksums every shard of the split
  Partitioned,  // rank r checksums shards r, r+W, ...: each shard once per job
  SizesOnly,    // no checksums (data already checked, e.g. by `wireup-prep --verify`)
};

// One split's shards, opened and checked, read as one token stream.
class ShardSet {
 public:
  // `split_name` ("train"/"validation") appears in errors. rank/world_size
  // only choose the shards to checksum under Verify::Partitioned.
  ShardSet(const std::filesystem::path& dir, const Manifest& manifest, const SplitEntry& split,
           const std::string& split_name, ReadMode mode, Verify verify, std::uint64_t rank = 0,
           std::uint64_t world_size = 1);

  std::uint64_t tokens() const { return starts_.back(); }
  const std::vector<ShardFile>& shards() const { return shards_; }

  // Copies tokens [first, first+count) of the concatenated split as stored
  // (token_bytes per token, see ShardFile::read_raw), crossing shard
  // boundaries as needed, and checks them with check_ids.
  void read_raw(std::uint64_t first, std::uint64_t count, unsigned char* out) const;

  // The loss mask of tokens [first, first+count) of the split, one byte a
  // token (1: trained); all 1 where the shards have no mask (version 1).
  void read_mask(std::uint64_t first, std::uint64_t count, std::uint8_t* out) const;
  // Whether the shards carry a loss mask (a chat data set's, version 2).
  bool has_mask() const { return shards_.front().header().has_mask(); }

  // Every document's first token in the split's stream, then tokens():
  // the shards' document indexes, checked and joined.
  std::vector<std::uint64_t> doc_starts() const;

  // InputError naming the shard, the token and its document, and the
  // manifest, when one of the `count` stored tokens at `raw` (tokens [first,
  // first+count) of the split) is not below the manifest's vocab_size: a
  // shard from another tokenizer, or damaged before its checksum was taken.
  void check_ids(std::uint64_t first, std::uint64_t count, const unsigned char* raw) const;

  // Where token `token` of the split is stored: "PATH at byte N" (no I/O:
  // safe from another thread while a read of it is stuck).
  std::string locate(std::uint64_t token) const;

  // Where tokens [first, first+count) lie in memory when they are in one
  // mapped shard (the common case: a window crosses into the next shard
  // once per shard), so the loader can copy them without per-token-range
  // calls; null otherwise (crossing a boundary, pread, out of range).
  const unsigned char* mapped(std::uint64_t first, std::uint64_t count) const;

  // Where token `token` of the split lies, for errors: "SHARD: token N
  // (document D)", N and D counted from 0 within the shard.
  std::string describe(std::uint64_t token) const;

  // See ShardFile::prefetch and ShardFile::readahead.
  void prefetch(std::uint64_t first, std::uint64_t count) const;
  void readahead(std::uint64_t first, std::uint64_t count) const;

 private:
  std::vector<ShardFile> shards_;
  std::size_t shard_of(std::uint64_t token) const;
  template <class Fn>
  void for_pieces(std::uint64_t first, std::uint64_t count, Fn fn) const;

  std::vector<std::uint64_t> starts_;  // first token of each shard, then the total
  std::filesystem::path manifest_file_;
  std::uint32_t vocab_size_ = 0;
  unsigned token_bytes_ = 2;
};

// Windows of context+1 tokens at stride `context` (window i starts at token
// i*context; its last token is the next window's first): (tokens-1)/context.
std::uint64_t window_count(std::uint64_t tokens, std::uint64_t context);

}  // namespace wireup::data
