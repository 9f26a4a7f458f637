#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <utility>

#include "loader_impl.hpp"

// The prefetch threads and the ring that hands their blocks of batches to
// next(): the design is described above TokenLoader::Impl (loader_impl.hpp).
namespace wireup::data {
namespace {

bool has_storage(const Batch& b) { return b.tokens.capacity() > 0; }

}  // namespace

// Step `seq` (step k of its block) filled into `b` by `filler`; false when
// the run ended before it.
bool TokenLoader::Impl::fill_step(std::uint64_t block, std::size_t k, std::size_t filler,
                                  Batch& b) {
  const std::uint64_t seq = block * group + k;
  std::uint64_t next[kReadAhead];
  std::size_t n_next = 0;
  Filler& f = fillers[filler];
  if (!plan->step(seq, f.plan, f.step, next, kReadAhead, n_next)) return false;
  if (k == 0) hint_ahead(block);
  fill(f.step, {next, n_next, k + 1 < group ? kOwn : block + 1, &dispatched}, b);
  return true;
}

// Claims the next block for a ring slot, or returns false when none may
// be claimed now: ring full, the slot still held by the filler of a
// stolen block, the end or an error met, stopping.
bool TokenLoader::Impl::claim(std::uint64_t& block) {
  std::uint64_t d = dispatched.load();
  for (;;) {
    if (stop.load() || dispatch_done.load()) return false;
    // A stale `consumed` only under-counts the room.
    if (d - consumed.load() >= n_slots) return false;
    // Free stays free until block d's claimer marks it: the check holds.
    Slot& slot = slots[d % n_slots];
    if (slot.state.load() != kFree) return false;
    if (dispatched.compare_exchange_weak(d, d + 1)) {
      slot.state.store(kClaimed);
      block = d;
      return true;
    }
  }
}

// Buffers into `filler`'s pool (those with storage; `from` is emptied).
void TokenLoader::Impl::push_buffers(std::size_t filler, std::vector<Batch>& from) {
  Filler& f = fillers[filler];
  const std::lock_guard lock(f.mu);
  for (auto& b : from)
    if (has_storage(b)) f.pool.push_back(std::move(b));
  from.clear();
}

void TokenLoader::Impl::push_buffer(std::size_t filler, Batch&& b) {
  if (!has_storage(b)) return;
  Filler& f = fillers[filler];
  const std::lock_guard lock(f.mu);
  f.pool.push_back(std::move(b));
}

// A buffer of `filler`'s pool (empty if it has none: fill() allocates).
Batch TokenLoader::Impl::pop_buffer(std::size_t filler) {
  Filler& f = fillers[filler];
  const std::lock_guard lock(f.mu);
  if (f.pool.empty()) return {};
  Batch b = std::move(f.pool.back());
  f.pool.pop_back();
  return b;
}

// Buffers of `filler`'s pool into the empty Batches of `to` (any left
// empty are allocated by fill()).
void TokenLoader::Impl::pop_buffers(std::size_t filler, std::vector<Batch>& to) {
  Filler& f = fillers[filler];
  const std::lock_guard lock(f.mu);
  for (auto& b : to) {
    if (f.pool.empty()) return;
    if (has_storage(b)) continue;
    b = std::move(f.pool.back());
    f.pool.pop_back();
  }
}

// Wakes sleeping workers when the ring has room for a run of them (or
// always, when `any`): they refill in runs instead of waking once per block.
void TokenLoader::Impl::wake_producers(bool any) {
  if (producers_sleeping.load() == 0) return;
  if (!any && dispatched.load() - consumed.load() > n_slots / 2) return;
  const std::lock_guard lock(mu);
  producer_cv.notify_all();
}

void TokenLoader::Impl::announce() {
  events.fetch_add(1);
  if (consumer_sleeping.load()) {
    const std::lock_guard lock(mu);
    consumer_cv.notify_one();
  }
}

// Fills claimed block `block` into its slot with buffers of `filler`'s
// pool and publishes it. The end or an error is published with the steps
// before it, and nothing is claimed after it.
void TokenLoader::Impl::complete(std::uint64_t block, std::size_t filler) {
  Slot& slot = slots[block % n_slots];
  slot.batches.resize(group);
  pop_buffers(filler, slot.batches);
  slot.filler = filler;
  slot.filled = 0;
  slot.end = false;
  slot.error = nullptr;
  try {
    while (slot.filled < group) {
      if (!fill_step(block, slot.filled, filler, slot.batches[slot.filled])) {
        slot.end = true;
        break;
      }
      ++slot.filled;
    }
  } catch (...) {
    slot.error = std::current_exception();
  }
  const bool last = slot.end || slot.error;
  if (last) dispatch_done.store(true);
  int claimed = kClaimed;
  if (!slot.state.compare_exchange_strong(claimed, kReady)) {
    // Stolen: the caller fills this block itself. Free the slot.
    push_buffers(filler, slot.batches);
    slot.filled = 0;
    slot.end = false;
    slot.error = nullptr;
    slot.state.store(kFree);
    wake_producers(true);
  }
  announce();
  if (last) wake_producers(true);  // to see dispatch_done and stop
}

// Keeps the kernel fetching the windows of the `readahead` steps after
// block `block`'s first, each step hinted once. Hints are advice: their
// errors are ignored. The scratch Step is per call: readahead is for FSx,
// where a window is a network round trip and an allocation is nothing.
void TokenLoader::Impl::hint_ahead(std::uint64_t block) {
  if (cfg.readahead == 0) return;
  const std::uint64_t first = block * group;
  const std::uint64_t target = first + group + cfg.readahead;
  std::uint64_t h = hinted.load();
  while (h < target && !hinted.compare_exchange_weak(h, target)) {
  }
  Sampler::Step scratch;
  for (std::uint64_t k = std::max(h, first + 1); k < target; ++k) {
    try {
      const auto at = sampler->advance(plan->run_start(), k);
      if (!at || !sampler->next(*at, scratch)) return;
    } catch (...) {
      return;
    }
    for (const auto w : scratch.windows) readahead_window(w);
  }
}

void TokenLoader::Impl::run(std::size_t filler) {
  // Background work: with SCHED_BATCH a worker woken by next() does not
  // preempt the caller (the training loop, which launches the GPU work)
  // but runs on a free core or at the end of the caller's time slice. On
  // a machine with fewer free cores than threads this also stops the
  // caller and the worker from ping-ponging on one core, a context
  // switch each way every few batches. Unprivileged; ignored on failure.
  sched_param param{};
  pthread_setschedparam(pthread_self(), SCHED_BATCH, &param);
  for (;;) {
    std::uint64_t block = 0;
    if (!claim(block)) {
      std::unique_lock lock(mu);
      bool got = false;
      for (;;) {
        producers_sleeping.fetch_add(1);  // before the check: see above
        got = claim(block);
        if (got || stop.load() || dispatch_done.load()) {
          producers_sleeping.fetch_sub(1);
          break;
        }
        producer_cv.wait(lock);
        producers_sleeping.fetch_sub(1);
      }
      if (!got) return;
    }
    complete(block, filler);
  }
}

// Steps per block and ring slots for `cfg`: blocks of about kBlockBytes,
// at most prefetch / kMinSlots steps, so the ring holds about `prefetch`
// batches.
void TokenLoader::Impl::size_ring() {
  const std::uint64_t batch_bytes = std::max<std::uint64_t>(1, cfg.batch_size * rows->row_bytes());
  group = static_cast<std::size_t>(std::clamp<std::uint64_t>(
      std::min<std::uint64_t>(kBlockBytes / batch_bytes, cfg.prefetch / kMinSlots), 1,
      cfg.prefetch));
  n_slots = std::max<std::size_t>(1, cfg.prefetch / group);
}

void TokenLoader::Impl::start() {
  cur.ended = false;
  cur.failed = nullptr;
  if (cfg.prefetch == 0) return;
  const std::size_t n = std::clamp<std::size_t>(cfg.workers, 1, cfg.prefetch);
  if (!slots) {
    size_ring();
    slots = std::make_unique<Slot[]>(n_slots);
    fillers = std::make_unique<Filler[]>(n + 1);
    n_fillers = n + 1;
    cur.give_back.resize(n_fillers);
  }
  plan->reset(pos);  // no worker runs here
  for (std::size_t f = 0; f < n_fillers; ++f) fillers[f].plan.reset();
  cur.kind = Cursor::kNone;
  cur.end_after = false;
  cur.error_after = nullptr;
  dispatched = 0;
  consumed = 0;
  hinted = 0;
  dispatch_done = false;
  stop = false;
  for (std::size_t i = 1; i <= n; ++i) workers.emplace_back([this, i] { run(i); });
}

// Stops and joins the workers; their buffers are kept for reuse.
void TokenLoader::Impl::halt() {
  {
    const std::lock_guard lock(mu);
    stop = true;
    producer_cv.notify_all();
  }
  for (auto& w : workers) w.join();
  workers.clear();
  if (!slots) return;
  for (std::size_t i = 0; i < n_slots; ++i) {
    Slot& slot = slots[i];
    push_buffers(slot.filler, slot.batches);
    slot.state = kFree;
    slot.filled = 0;
    slot.end = false;
    slot.error = nullptr;
  }
  for (std::size_t f = 0; f < n_fillers; ++f) push_buffers(f, cur.give_back[f]);
}

// The caller is done with a block: others may claim its slot's next use,
// and the workers' buffers go back to their pools.
void TokenLoader::Impl::release(std::uint64_t block) {
  consumed.store(block + 1);
  for (std::size_t f = 1; f < n_fillers; ++f)
    if (!cur.give_back[f].empty()) push_buffers(f, cur.give_back[f]);
  wake_producers(false);
  cur.kind = Cursor::kNone;
}

// The next step of the caller's own block, filled straight into `b`.
bool TokenLoader::Impl::next_own(Batch& b) {
  const std::uint64_t block = cur.block;
  try {
    if (cur.held_filler != 0) {  // b's buffer is a worker's: give it back, fill one of ours
      cur.give_back[cur.held_filler].push_back(std::move(b));
      b = pop_buffer(0);
      cur.held_filler = 0;
    }
    if (!fill_step(block, cur.i, 0, b)) {
      cur.ended = true;
      dispatch_done.store(true);
      wake_producers(true);
      return false;
    }
  } catch (...) {
    cur.failed = std::current_exception();
    dispatch_done.store(true);
    wake_producers(true);
    std::rethrow_exception(cur.failed);
  }
  pos = b.after;
  if (++cur.i == group) release(block);
  return true;
}

// The next batch of the published slot the caller holds.
void TokenLoader::Impl::next_taken(Batch& b) {
  Slot& slot = *cur.slot;
  Batch got = std::move(slot.batches[cur.i]);
  std::swap(b, got);  // `got` is now the caller's previous buffer
  if (cur.held_filler == 0)
    push_buffer(0, std::move(got));
  else
    cur.give_back[cur.held_filler].push_back(std::move(got));
  cur.held_filler = slot.filler;
  pos = b.after;
  if (++cur.i == slot.filled) free_slot();
}

// Frees the published slot the caller has taken every batch of, keeping
// the end or error that follows them for the next call.
void TokenLoader::Impl::free_slot() {
  Slot& slot = *cur.slot;
  cur.end_after = slot.end;
  cur.error_after = slot.error;
  slot.filled = 0;
  slot.state.store(kFree);
  release(cur.block);
}

// Makes block `consumed` the caller's: published in its slot, or claimed
// or taken over to fill itself; fills later blocks while a worker has it.
void TokenLoader::Impl::acquire() {
  const std::uint64_t c = consumed.load(std::memory_order_relaxed);
  Slot& slot = slots[c % n_slots];
  cur.block = c;
  cur.i = 0;
  for (;;) {
    const std::uint64_t seen = events.load();
    std::uint64_t d = dispatched.load();
    if (d == c) {  // not claimed yet: ours
      if (dispatched.compare_exchange_strong(d, c + 1)) {
        cur.kind = Cursor::kOwn;
        return;
      }
      continue;
    }
    int state = slot.state.load();
    if (state == kReady) {
      cur.kind = Cursor::kSlot;
      cur.slot = &slot;
      return;
    }
    std::uint64_t later = 0;
    if (claim(later)) {  // a worker has ours: fill a later one meanwhile
      complete(later, 0);
      continue;
    }
    if (state == kClaimed) {  // nothing else to do: fill ours too, drop the worker's
      if (slot.state.compare_exchange_strong(state, kStolen)) {
        cur.kind = Cursor::kOwn;
        return;
      }
      continue;
    }
    // Claimed but not yet marked (a moment): wait for its publication.
    consumer_sleeping.store(true);
    {
      std::unique_lock lock(mu);
      while (events.load() == seen && slot.state.load() == kFree) consumer_cv.wait(lock);
    }
    consumer_sleeping.store(false);
  }
}

bool TokenLoader::Impl::next_prefetched(Batch& b) {
  if (cur.failed) std::rethrow_exception(cur.failed);
  if (cur.ended) return false;
  if (cur.kind == Cursor::kNone) {
    if (cur.error_after) {
      cur.failed = cur.error_after;
      std::rethrow_exception(cur.failed);
    }
    if (cur.end_after) {
      cur.ended = true;
      return false;
    }
    acquire();
  }
  if (cur.kind == Cursor::kOwn) return next_own(b);
  if (cur.slot->filled == 0) {  // the end or an error at the block's first step
    free_slot();
    return next_prefetched(b);
  }
  next_taken(b);
  return true;
}

}  // namespace wireup::data
