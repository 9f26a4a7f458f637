#include "step_plan.hpp"

#include <algorithm>
#include <utility>

namespace wireup::data::detail {
namespace {

bool covers(const StepPlan::Cache& c, std::uint64_t seq) {
  return c && seq >= c->first && seq - c->first < StepPlan::kChunkSteps;
}

}  // namespace

void StepPlan::reset(const Position& run_start) {
  run_start_ = run_start;
  const std::lock_guard lock(mu_);
  latest_.reset();
}

// The chunk holding step `seq`, kept in `cache` until it needs another (so
// valid until this thread's next call).
const StepPlan::Chunk& StepPlan::chunk_for(std::uint64_t seq, Cache& cache) {
  if (covers(cache, seq)) return *cache;
  {
    const std::lock_guard lock(mu_);
    cache = latest_;
  }
  if (covers(cache, seq)) return *cache;
  auto fresh = std::make_shared<Chunk>();
  fresh->first = seq / kChunkSteps * kChunkSteps;
  if (const auto at = sampler_.advance(run_start_, fresh->first))
    fresh->steps.resize(sampler_.next_many(*at, kChunkSteps, fresh->steps));
  cache = fresh;
  // Publish it unless a later chunk is there already (from a thread ahead).
  const std::lock_guard lock(mu_);
  if (!latest_ || latest_->first < fresh->first) latest_ = std::move(fresh);
  return *cache;
}

bool StepPlan::step(std::uint64_t seq, Cache& cache, Sampler::Step& out, std::uint64_t* next,
                    std::size_t max_next, std::size_t& n_next) {
  const Chunk& c = chunk_for(seq, cache);
  const std::uint64_t i = seq - c.first;
  if (i >= c.steps.size()) return false;
  const Sampler::Step& s = c.steps[i];
  out.windows.assign(s.windows.begin(), s.windows.end());
  out.epoch = s.epoch;
  out.after = s.after;
  const Sampler::Step* after = nullptr;
  if (i + 1 < c.steps.size()) {
    after = &c.steps[i + 1];
  } else if (c.steps.size() == kChunkSteps) {  // the run goes on: the next chunk (`c` may go)
    const Chunk& later = chunk_for(seq + 1, cache);
    if (!later.steps.empty()) after = &later.steps.front();
  }
  n_next = after ? std::min(max_next, after->windows.size()) : 0;
  for (std::size_t k = 0; k < n_next; ++k) next[k] = after->windows[k];
  return true;
}

}  // namespace wireup::data::detail
