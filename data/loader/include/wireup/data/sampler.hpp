#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/data/permutation.hpp"

namespace wireup::data {

// Where a job is in its data, the same on every rank (ranks move in lock
// step), so one copy goes into the checkpoint. Semantics in docs/data-loader.md.
struct Position {
  std::uint64_t seed = 0;    // shuffle seed of the run
  std::uint64_t epoch = 0;   // 0-based
  std::uint64_t offset = 0;  // entries of this epoch's order consumed by all ranks together
  std::uint64_t step = 0;    // batches returned since the start of training (for max_steps)
  bool operator==(const Position&) const = default;
};

// One-line JSON, e.g. {"epoch":1,"offset":96,"seed":7,"step":40,"version":1}.
std::string position_to_json(const Position& p);
// `name` (e.g. the checkpoint file) starts every error message.
Position position_from_json(std::string_view text, const std::string& name);

struct SamplerConfig {
  std::uint64_t windows = 0;     // windows in the split
  std::uint64_t batch_size = 1;  // windows per rank per step
  std::uint64_t rank = 0;
  std::uint64_t world_size = 1;
  bool shuffle = true;
  std::uint64_t epochs = 1;     // 0: no limit
  std::uint64_t max_steps = 0;  // 0: no limit
};

// DistributedSampler(drop_last=True) + set_epoch, without the index table:
// epoch e's order is Permutation(windows, epoch_key(seed, e)); each step
// consumes the next batch_size*world_size entries, and rank r takes entries
// offset + r + j*world_size for j < batch_size. An epoch ends when fewer than
// batch_size*world_size entries remain: those (< B*W) windows are skipped
// that epoch, and a different set the next.
// Its methods are const and keep no state: safe to call from several
// threads at once.
class Sampler {
 public:
  explicit Sampler(const SamplerConfig& config);

  // Steps in each epoch: windows / (batch_size * world_size), rounded down.
  std::uint64_t steps_per_epoch() const { return steps_per_epoch_; }
  const SamplerConfig& config() const { return config_; }

  // The window ids of this rank's next batch after `at`, and the position
  // after it (`at` is not changed). nullopt when epochs or max_steps are done.
  struct Step {
    std::vector<std::uint64_t> windows;
    Position after;
    std::uint64_t epoch = 0;
  };
  std::optional<Step> next(const Position& at) const;
  // The same into `out`, reusing its storage (no allocation per step once
  // out.windows has grown); false when epochs or max_steps are done.
  bool next(const Position& at, Step& out) const;

  // next() `count` times from `at`: the steps into steps[0..n), n returned
  // (fewer than `count` when the run ends). The same steps, computed faster
  // for callers that consume them in order: the windows of all the steps of
  // one epoch go through Permutation::map together. `steps` keeps its
  // storage between calls.
  std::size_t next_many(const Position& at, std::size_t count, std::vector<Step>& steps) const;

  // The first `count` (at most batch_size) window ids of the step next()
  // would return, into `out`; how many (0 when none follows). For reading
  // ahead across a batch's end: cheaper than next() for a few.
  std::size_t peek(const Position& at, std::size_t count, std::uint64_t* out) const;

  // The position after `steps` calls of next() from `at` (`at` itself for
  // 0), in O(1); nullopt when fewer steps than that remain. Lets prefetch
  // threads claim step k of a run with an atomic counter alone.
  std::optional<Position> advance(const Position& at, std::uint64_t steps) const;

  // The window at entry `index` of `epoch`'s order.
  std::uint64_t window_at(std::uint64_t seed, std::uint64_t epoch, std::uint64_t index) const;

 private:
  // `at` with a finished epoch rolled over, into `p`; false when no step follows.
  bool start_of_next(const Position& at, Position& p) const;
  // The first `count` (at most batch_size) epoch-order entries this rank
  // takes at `p`, into `out`; how many.
  std::size_t entries(const Position& p, std::uint64_t count, std::uint64_t* out) const;
  // Entries to window ids in place: `seed` and `epoch`'s permutation, when shuffling.
  void shuffle(std::uint64_t seed, std::uint64_t epoch, std::uint64_t* ids, std::size_t n) const;

  SamplerConfig config_;
  std::uint64_t steps_per_epoch_ = 0;
  std::uint64_t per_step_ = 0;
};

}  // namespace wireup::data
