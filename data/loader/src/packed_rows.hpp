#pragma once
#include <cstdint>
#include <vector>

#include "wireup/data/packing.hpp"
#include "wireup/data/shard_set.hpp"

// Internal to wireup_data: copies packed windows (whole documents, see
// PackPlan) into a batch's rows, with each token's loss mask and segment.
namespace wireup::data::detail {

class PackedRowReader {
 public:
  // Rows of `cols` tokens; padding after a window's documents is `pad_id`.
  PackedRowReader(const ShardSet& set, const PackPlan& plan, std::uint64_t cols,
                  unsigned token_bytes, std::uint32_t pad_id)
      : set_(set), plan_(plan), cols_(cols), token_bytes_(token_bytes), pad_id_(pad_id) {}

  // windows.size() rows: tokens as stored (cols * token_bytes bytes a row),
  // mask (cols bytes a row: 1 trained) and segments (cols a row: the
  // piece's index in its window; padding is one more segment after the
  // last piece). Token ids are checked against the vocabulary (ShardSet::read_raw).
  void read(const std::vector<std::uint64_t>& windows, unsigned char* tokens, std::uint8_t* mask,
            std::int32_t* segments) const;

  // Asks the kernel to fetch window w's pieces (ShardSet::readahead).
  void readahead(std::uint64_t w) const;

 private:
  const ShardSet& set_;
  const PackPlan& plan_;
  std::uint64_t cols_;
  unsigned token_bytes_;
  std::uint32_t pad_id_;
};

}  // namespace wireup::data::detail
