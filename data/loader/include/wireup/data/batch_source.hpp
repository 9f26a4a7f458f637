#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "wireup/data/loader.hpp"

// Where a training run's batches come from: a prepared split through the
// TokenLoader, or deterministic synthetic tokens. Synthetic draws are
// numbered here (which step, which rows, which seed); the token values come
// from the trainer's random generator (trainer/model/batch_tokens.hpp).
namespace wireup::data {

struct BatchSourceConfig {
  std::filesystem::path dataset;  // manifest.json or its directory; empty: synthetic tokens
  Split split = Split::Train;     // validation: in file order, one pass, no accumulation
  std::uint64_t context = 0;      // T: each row holds T+1 tokens
  std::uint64_t batch_size = 1;   // rows per rank per micro-step
  std::uint64_t rank = 0;
  std::uint64_t world_size = 1;
  std::uint64_t seed = 0;
  std::uint64_t grad_accum = 1;            // micro-steps per optimizer step
  std::uint64_t epochs = 1;                // 0: no limit
  std::size_t readahead = 0;               // LoaderConfig::readahead
  Packing packing = Packing::Auto;         // LoaderConfig::packing: chat data sets are packed
  Overlong overlong = Overlong::Truncate;  // LoaderConfig::overlong
};

// One synthetic micro-batch: optimizer step `step` has one global batch of
// `global_rows` rows (grad_accum * world * batch_size) drawn with `seed`;
// micro-step `micro` of rank r takes its rows from `first_row`
// ((micro * world + r) * batch_size): the same tokens, in the same per-step
// sets, for any world size and accumulation split.
struct SyntheticDraw {
  std::uint64_t step = 0;
  std::uint64_t micro = 0;
  std::uint64_t seed = 0;
  std::uint64_t global_rows = 0;
  std::uint64_t first_row = 0;
};

class BatchSource {
 public:
  // Opens the split's loader (validating the manifest and shards) unless synthetic.
  explicit BatchSource(const BatchSourceConfig& c);
  ~BatchSource();
  BatchSource(const BatchSource&) = delete;
  BatchSource& operator=(const BatchSource&) = delete;

  bool synthetic() const { return !loader_; }
  // The loader (nullptr when synthetic): its manifest names the vocabulary.
  const TokenLoader* loader() const { return loader_.get(); }

  // Loader-backed: this rank's next rows as stored; false when the data is exhausted.
  bool next(Batch& b);
  // Synthetic: the next draw.
  SyntheticDraw next_synthetic();

  // Where the next batch comes from, for the checkpoint ("synthetic:N" or the
  // loader's position as JSON); seek() restores it, InputError when it does
  // not fit this source.
  std::string position() const;
  void seek(const std::string& position);
  // Back to the first batch (validation: the same batches every time).
  void rewind();

 private:
  BatchSourceConfig c_;
  std::int64_t accum_;
  std::uint64_t synthetic_seed_;
  std::int64_t draws_ = 0;
  std::unique_ptr<TokenLoader> loader_;
};

}  // namespace wireup::data
