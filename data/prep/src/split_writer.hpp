#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "staging.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_writer.hpp"

// Internal to wireup-prep: one split's shards, written into the staging
// directory.
namespace wireup::prep {

// The shards of one split (PREFIX-00000.bin, ...): a new shard starts when
// the next document would push the current one past shard_tokens (documents
// never straddle shards).
class SplitWriter {
 public:
  // `masked`: version 2 shards, each document with its loss mask.
  SplitWriter(const Staging& staging, std::string prefix, std::uint32_t vocab, std::uint32_t bos,
              std::uint32_t eos, std::uint64_t shard_tokens, bool masked = false);

  void add(std::span<const std::uint32_t> doc, std::span<const std::uint8_t> mask = {});
  // Two documents in one shard (a preference pair: chosen, then rejected).
  void add_pair(std::span<const std::uint32_t> a, std::span<const std::uint8_t> a_mask,
                std::span<const std::uint32_t> b, std::span<const std::uint8_t> b_mask);
  // Finishes the open shard (if any) and records it in split().
  void close();

  const data::SplitEntry& split() const { return split_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  void open_if_closed();

  const Staging& staging_;
  std::string prefix_;
  std::uint32_t vocab_, bos_, eos_;
  std::uint64_t shard_tokens_;
  bool masked_;
  std::unique_ptr<data::ShardWriter> writer_;
  std::vector<std::string> names_;
  data::SplitEntry split_;
};

}  // namespace wireup::prep
