#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "wireup/data/sampler.hpp"

// Internal to wireup_data: which windows each step of a run reads.
namespace wireup::data::detail {

// The steps of a run (counted from `run_start`), worked out kChunkSteps at a
// time (Sampler::next_many: their windows' permutations interleave, about
// twice the speed of one step at a time) and shared by the threads that
// fill batches. Steps are asked for roughly in order, so one chunk serves
// the next asks; a chunk is replaced, never changed, so a thread still
// reading an older one is safe. Each thread keeps the chunk it last used in
// its own Cache and reads it without a lock while it covers the step.
// (Not std::atomic<std::shared_ptr>: libstdc++ 12's lock bit is a data race
// to ThreadSanitizer.)
class StepPlan {
 public:
  static constexpr std::uint64_t kChunkSteps = 32;
  struct Chunk {
    std::uint64_t first = 0;           // the step number of steps[0]
    std::vector<Sampler::Step> steps;  // fewer than kChunkSteps where the run ends
  };
  using Cache = std::shared_ptr<const Chunk>;  // one per thread

  explicit StepPlan(const Sampler& sampler) : sampler_(sampler) {}

  // Starts a run at `run_start`. No thread may use the plan meanwhile, and
  // every Cache must be reset too.
  void reset(const Position& run_start);
  const Position& run_start() const { return run_start_; }

  // Step `seq` of the run into `out`, and the first (at most `max_next`)
  // windows of the step after it into `next`, `n_next` of them; false when
  // the run ended before step `seq`.
  bool step(std::uint64_t seq, Cache& cache, Sampler::Step& out, std::uint64_t* next,
            std::size_t max_next, std::size_t& n_next);

 private:
  const Chunk& chunk_for(std::uint64_t seq, Cache& cache);

  const Sampler& sampler_;
  Position run_start_;
  std::mutex mu_;  // held only to copy or swap `latest_`
  std::shared_ptr<const Chunk> latest_;
};

}  // namespace wireup::data::detail
