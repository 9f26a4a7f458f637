#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "wireup/data/manifest.hpp"
#include "wireup/data/packing.hpp"
#include "wireup/data/sampler.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_set.hpp"

namespace wireup::data {

enum class Split { Train, Validation };

// How rows are cut from the split (docs/data-loader.md, "Packed windows").
enum class Packing {
  Auto,  // packed when the data set is a chat data set (its shards carry a loss mask)
  Off,   // windows at stride `context` over the token stream, ignoring documents
  On,    // whole documents packed into rows (a mask of all 1 where the shards have none)
};

struct LoaderConfig {
  std::filesystem::path manifest;  // manifest.json or the directory holding it
  Split split = Split::Train;
  std::uint64_t context = 2048;  // T: each row holds T+1 tokens (inputs + shifted targets)
  std::uint64_t batch_size = 1;  // B rows per step on each rank
  std::uint64_t rank = 0;
  std::uint64_t world_size = 1;
  std::uint64_t seed = 0;       // shuffle seed (a resumed Position brings its own)
  bool shuffle = true;          // false: windows in file order (validation)
  std::uint64_t epochs = 1;     // 0: no limit
  std::uint64_t max_steps = 0;  // 0: no limit; counts steps across epochs
  std::size_t prefetch = 32;    // batches read ahead in the background; 0: none (synchronous).
                                // Handed over in blocks of up to prefetch/4 batches
                                // (~256 KiB): 32 lets 32 KiB batches go 8 at a time
  std::size_t workers = 1;      // background threads filling batches (at most prefetch);
                                // a caller whose batch is not ready fills it, or later
                                // ones, itself rather than waiting (docs/data-loader.md)
  std::size_t readahead = 0;    // steps ahead to ask the kernel to fetch; 0: off.
                                // Use ~prefetch on FSx/Lustre, where reads are round trips
  ReadMode read_mode = ReadMode::Mmap;
  Verify verify = Verify::All;
  Packing packing = Packing::Auto;         // a preference data set: Auto or On, both pair mode
  Overlong overlong = Overlong::Truncate;  // packed: a document (pair mode: a pair) longer
                                           // than a row; Split is refused for pairs
};

// One step's rows for this rank: rows x cols tokens, row-major, cols = T+1.
// Row i's inputs are tokens i*cols .. i*cols+T-1, its targets one further.
// Packed rows (TokenLoader::packed()) also carry, per token, the loss mask
// and the segment (which document of the row it belongs to); see
// target_trained for the flag of each next-token target.
// Tokens are as the shards store them: token_bytes (2 or 4) little-endian
// bytes each, a quarter of int64's bytes to move to a GPU, which widens them
// there (uint16 viewed as kInt16: `.to(kLong) & 0xFFFF`).
struct Batch {
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
  std::uint32_t token_bytes = 0;       // of the shards: 2 or 4
  std::vector<unsigned char> tokens;   // rows*cols*token_bytes bytes
  std::vector<std::uint64_t> windows;  // the window id of each row
  std::uint64_t epoch = 0;
  Position after;  // the loader position once this batch is consumed
  // Packed rows only (empty otherwise), rows*cols each, aligned with `tokens`:
  // loss_mask[i*cols+j] is 1 when token j of row i is a trained token (the
  // template's assistant content and its <|eot_id|>), 0 otherwise and for
  // padding; segments[i*cols+j] is the index of the document (conversation)
  // token j belongs to within row i: 0, 1, ... in order, padding one more
  // after the last. Positions restart and attention stops where it changes.
  std::vector<std::uint8_t> loss_mask;
  std::vector<std::int32_t> segments;
  // Pair mode (TokenLoader::paired(), a preference data set; empty
  // otherwise): pairs[i] is the number of pairs in row i, at least 1. Row i's
  // segments 2p and 2p+1 (p < pairs[i]) are pair p's chosen and rejected
  // documents (prompt + completion, both in this row, cut by keep_start when
  // the pair is longer than a row); segment 2*pairs[i] is the padding.
  // target_trained marks the completions' tokens only.
  std::vector<std::uint32_t> pairs;

  // Token j of row i.
  std::uint32_t token(std::uint64_t i, std::uint64_t j) const;
  bool packed() const { return !segments.empty(); }
  bool paired() const { return !pairs.empty(); }
  // Pair mode: the segments of a row's pair p, chosen then rejected.
  static std::int32_t chosen_segment(std::uint32_t p) { return static_cast<std::int32_t>(2 * p); }
  static std::int32_t rejected_segment(std::uint32_t p) {
    return static_cast<std::int32_t>(2 * p + 1);
  }
  // Whether the target of input position j (< cols-1) of row i, token j+1,
  // enters the loss: it is a trained token of the same segment as token j.
  // (A row's first token, and a segment's, is never a target.)
  bool target_trained(std::uint64_t i, std::uint64_t j) const {
    const std::uint64_t t = i * cols + j + 1;
    return loss_mask[t] != 0 && segments[t] == segments[t - 1];
  }
  const void* data() const { return tokens.data(); }
  void* data() { return tokens.data(); }
};

// Reads shuffled, rank-disjoint windows of a prepared split, with
// background threads keeping up to `prefetch` batches ready. Opening validates the
// manifest, every shard's header and size, and checksums per `verify`.
// Use it from one thread at a time. next(b) reuses b's storage (the
// previous batch's buffers) for later batches: copy what must outlive it.
class TokenLoader {
 public:
  explicit TokenLoader(LoaderConfig config);
  ~TokenLoader();  // stops and joins the prefetch threads
  TokenLoader(const TokenLoader&) = delete;
  TokenLoader& operator=(const TokenLoader&) = delete;

  // The next batch, or false once epochs or max_steps are done. Re-raises
  // any error of the prefetch threads (e.g. an I/O error naming the shard).
  bool next(Batch& batch);

  // Position after the last batch next() returned: save it in the checkpoint.
  Position position() const;
  // Continue from `p` (from position() of this or an earlier run): the
  // following batches are exactly those that followed `p` before.
  void seek(const Position& p);

  std::uint64_t tokens() const;   // in the split
  std::uint64_t windows() const;  // (tokens-1)/context, or the packed windows
  bool packed() const;            // rows are packed documents (Batch::packed())
  // Rows are packed pairs (a preference data set: Batch::paired()); implies packed().
  bool paired() const;
  // Packed: how the split's documents went into windows (efficiency,
  // truncated, split, dropped; in pair mode also pairs, truncated_pairs and
  // dropped_pairs); nullptr when not packed.
  const PackStats* pack_stats() const;
  std::uint64_t steps_per_epoch() const;  // windows / (B*W)
  const Manifest& manifest() const;
  const LoaderConfig& config() const;
  // The tokenizer copy next to the manifest (for decoding samples).
  std::filesystem::path tokenizer_path() const;

  // The shard rows being read now, "PATH at byte N" each (one per reading
  // thread): what a batch that does not come waits for. Safe from any
  // thread while next() runs; no I/O.
  std::vector<std::string> reads_in_progress() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wireup::data
