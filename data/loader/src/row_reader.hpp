#pragma once
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wireup/data/shard_set.hpp"

// Internal to wireup_data: copies a step's windows into a batch's rows.
namespace wireup::data::detail {

// The next step's first windows, which a batch's last rows read ahead (pull
// into L2) so the next batch does not start cold. They are read ahead only
// while that step is this thread's to fill: `block` kOwn, or block `block` of
// the prefetch ring not yet claimed (`claimed` below it). Lines pulled into
// this core's cache would reach another core by a transfer between the two,
// dearer than DRAM across core complexes.
struct Ahead {
  static constexpr std::uint64_t kOwn = ~std::uint64_t{0};
  const std::uint64_t* next = nullptr;
  std::size_t n_next = 0;
  std::uint64_t block = kOwn;
  const std::atomic<std::uint64_t>* claimed = nullptr;  // blocks claimed so far
};

// The index of the first of `count` stored tokens (`width` 2 or 4 bytes,
// little-endian) whose id is `limit` or more; nullopt when there is none.
std::optional<std::size_t> first_id_at_least(const unsigned char* tokens, std::size_t count,
                                             unsigned width, std::uint64_t limit);

// Rows of context+1 tokens at window starts (window w starts at token
// w*context), copied as stored: token_bytes little-endian bytes per token.
class RowReader {
 public:
  // Rows read ahead of the one being copied.
  static constexpr std::size_t kReadAhead = 3;

  RowReader(const ShardSet& set, std::uint64_t context, unsigned token_bytes);

  std::uint64_t row_bytes() const { return (context_ + 1) * token_bytes_; }

  // windows.size() rows into `out` (row_bytes() each, row-major).
  void read(const std::vector<std::uint64_t>& windows, const Ahead& ahead,
            unsigned char* out) const;

  // The rows being read now, one per reading thread, as ShardSet::locate
  // says where they are ("PATH at byte N"): for the report of a batch that
  // does not come (a read stuck on the file system). Any thread; no I/O.
  std::vector<std::string> reads_in_progress() const;

 private:
  // Each read() holds a slot while it runs and stores in it the first token
  // of the row it copies (plus one; 0: free): one relaxed store per row, to a
  // line of its own.
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> token{0};
  };
  static constexpr std::size_t kSlots = 64;

  const ShardSet& set_;
  std::uint64_t context_;
  unsigned token_bytes_;
  mutable std::array<Slot, kSlots> reading_;
  // WIREUP_TEST_STALL_SHARD=NAME (tests only): a row that starts in that
  // shard never arrives, as a read stuck on the file system (a local disk
  // cannot hang a read); the shard's tokens [lo, hi).
  std::uint64_t stall_lo_ = 0, stall_hi_ = 0;
};

}  // namespace wireup::data::detail
