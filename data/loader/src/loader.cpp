#include "wireup/data/loader.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include "widen.hpp"
#include "wireup/error.hpp"

namespace wireup::data {

const void* Batch::data() const {
  switch (type) {
    case TokenType::Int64:
      return tokens64.data();
    case TokenType::Int32:
      return tokens32.data();
    case TokenType::Stored:
      return stored.data();
  }
  return nullptr;
}

void* Batch::data() { return const_cast<void*>(std::as_const(*this).data()); }

// Prefetch. The steps of a run (counted from the position of the last
// start()) go in blocks of `group` consecutive steps: block k is steps
// [k * group, (k + 1) * group). A block is the unit every thread claims,
// fills and hands over: a block is claimed by advancing the atomic counter
// `dispatched`, filled by one thread into ring slot k % n_slots and published
// with one atomic store; next() hands out its batches one by one with no
// shared write, and frees the slot after the last. The windows come from the
// shared plan (kPlanSteps steps worked out at once, see PlanChunk), so
// claiming takes no lock. The steady state takes no lock but the short ones
// of the buffer pools and the plan pointer, makes no system call and
// allocates only a plan chunk every kPlanSteps steps.
//
// Why blocks: every shared line a hand-over writes moves between the cores'
// caches, and an atomic read-modify-write on it waits for the move. On the
// 2-vCPU development VM that move takes 25-40 ns while the host keeps the
// two vCPUs in one core complex and 155-190 ns while it does not; at one
// hand-over per 32 KiB batch (~2 us of copying) the ~10 serialised moves of
// a hand-over cost the far case a third of the loader's rate. A block of
// ~256 KiB (`kBlockBytes`) pays them once per several batches. Batches of
// that size or more go one per block, as before.
//
// The caller never waits for a worker if it can work instead:
// - its block not yet claimed: it claims it and fills each step straight
//   into the Batch next() was given (no ring slot, no copy, hot in cache);
// - its block being filled by a worker: it fills later blocks into their
//   slots (helping), and once the ring is full it takes its block over
//   itself and marks the worker's copy stolen (the worker drops it when
//   done). A worker descheduled mid-block on a busy machine so costs a
//   repeated block, not a stall of the training loop until it runs again.
// Buffers: each filling thread (the caller is filler 0, workers 1..n) has
// its own LIFO pool, and a buffer goes back to the pool of the thread that
// filled it. The buffers in use so stay few and in that thread's cache, and
// no thread writes over lines another core holds: with one shared pool the
// worker and the helping caller refilled each other's buffers, every line
// moved between the cores' caches, and the loader read 10.5 GB/s where it
// now reads 18 (2-core VM, 4 KiB windows). The caller gives a worker's
// buffers back once per block, not once per batch.
//
// Sleeping (a worker facing a full ring, or the caller in the short gap
// between a claim and its slot's "claimed" mark) uses `mu`: a sleeper
// announces itself in an atomic, re-checks under `mu`, then waits; a waker
// changes the state, then reads the announcement (all sequentially
// consistent) and notifies under `mu`. One of the two sees the other's
// write, so no wake-up is lost.
struct TokenLoader::Impl {
  enum : int { kFree, kClaimed, kReady, kStolen };
  // Rows read ahead of the one being copied (read_rows): 2 to 4 measured
  // alike on one core, 1 about 10% slower.
  static constexpr std::size_t kReadAhead = 3;
  // Batch bytes a block aims at, and the fewest slots the ring keeps (so a
  // worker finds room while the caller holds one block and fills another).
  static constexpr std::uint64_t kBlockBytes = std::uint64_t{256} << 10;
  static constexpr std::size_t kMinSlots = 4;
  struct alignas(64) Slot {
    std::atomic<int> state{kFree};
    std::size_t filled = 0;      // batches[0, filled) hold the block's first steps
    bool end = false;            // the run ends after them
    std::exception_ptr error;    // the sampler or a read failed after them
    std::vector<Batch> batches;  // `group` of them; emptied as the caller takes them
    std::size_t filler = 0;      // the thread that filled them
  };

  LoaderConfig cfg;
  std::filesystem::path dir;
  Manifest manifest;
  std::unique_ptr<ShardSet> set;
  std::unique_ptr<Sampler> sampler;
  std::uint64_t windows = 0;
  Position pos;  // after the last batch handed out

  std::size_t group = 1;          // steps per block
  std::size_t n_slots = 0;        // ring slots, each a block
  std::unique_ptr<Slot[]> slots;  // n_slots of them
  Position run_start;             // pos at the last start(): step k is advance(run_start, k)
  // The counters shared per block, each on its own cache line: a write to
  // one does not take the others away from the core reading them. Both count
  // blocks; `consumed` is written by next() only.
  alignas(64) std::atomic<std::uint64_t> dispatched{0};  // blocks claimed
  alignas(64) std::atomic<std::uint64_t> consumed{0};    // blocks handed out whole
  alignas(64) std::atomic<std::uint64_t> events{0};      // publications, for a sleeping caller
  alignas(64) std::atomic<std::uint64_t> hinted{0};      // readahead: steps before it were hinted
  std::atomic<bool> dispatch_done{false};  // the end or an error was met: claim no more
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable producer_cv, consumer_cv;
  std::atomic<unsigned> producers_sleeping{0};
  std::atomic<bool> consumer_sleeping{false};
  std::vector<std::thread> workers;
  Sampler::Step sync_step;  // prefetch 0: the caller's step

  // The caller's side, written by next() only, on lines of its own.
  struct alignas(64) Cursor {
    enum Kind { kNone, kSlot, kOwn } kind = kNone;
    std::uint64_t block = 0;  // the block being handed out
    std::size_t i = 0;        // its next step
    Slot* slot = nullptr;     // kSlot: where its batches are
    // The last slot taken held the end or an error after its batches.
    bool end_after = false;
    std::exception_ptr error_after;
    std::size_t held_filler = 0;  // filled the Batch the caller holds (its last one)
    // Buffers of workers' pools the caller is done with, by filler: given
    // back once per block.
    std::vector<std::vector<Batch>> give_back;
    // Sticky outcome once next() met it: later calls repeat it.
    bool ended = false;
    std::exception_ptr failed;
  };
  Cursor cur;

  // The run's steps, worked out kPlanSteps at a time (Sampler::next_many:
  // their windows' permutations interleave, about twice the speed of one
  // step at a time) and shared by all threads. Blocks are claimed in order,
  // so one chunk serves the next claims; a chunk is replaced, not changed,
  // so a thread still reading an older one is safe. (Not
  // std::atomic<std::shared_ptr>: libstdc++ 12's lock bit is a data race to
  // ThreadSanitizer.)
  struct PlanChunk {
    std::uint64_t first = 0;           // the step number of steps[0]
    std::vector<Sampler::Step> steps;  // fewer than kPlanSteps where the run ends
  };
  static constexpr std::uint64_t kPlanSteps = 32;
  std::mutex plan_mu;  // held only to copy or swap the pointer
  std::shared_ptr<const PlanChunk> plan;

  // Per filling thread, on its own cache lines: its buffer pool (other
  // threads give buffers back under its mutex), the plan chunk it last used,
  // its own, read without any lock while it covers the step, and the step
  // it is filling.
  struct alignas(64) Filler {
    std::mutex mu;
    std::vector<Batch> pool;  // most recent last
    std::shared_ptr<const PlanChunk> plan;
    Sampler::Step step;
  };
  std::unique_ptr<Filler[]> fillers;  // the caller's is 0, worker i's is i
  std::size_t n_fillers = 0;

  // The next step's first windows, read ahead by a batch's last rows. They
  // are read only while that step's block is unclaimed or is the filling
  // thread's own: lines pulled into this core's L2 would reach another core
  // by a transfer between the two, dearer than DRAM when the two vCPUs sit
  // in different core complexes (that read-ahead cost ~10% of the loader's
  // rate with the worker and the helping caller taking turns).
  struct Ahead {
    const std::uint64_t* next = nullptr;
    std::size_t n_next = 0;
    std::uint64_t block = kOwn;  // kOwn: the same thread fills it, read ahead
  };
  static constexpr std::uint64_t kOwn = ~std::uint64_t{0};

  void fill(const Sampler::Step& step, const Ahead& ahead, Batch& b) const {
    const std::uint64_t T = cfg.context;
    b.rows = step.windows.size();
    b.cols = T + 1;
    b.type = cfg.token_type;
    b.windows.assign(step.windows.begin(), step.windows.end());
    b.epoch = step.epoch;
    b.after = step.after;
    b.token_bytes = manifest.token_bytes;
    const std::uint64_t n = b.rows * b.cols;
    const Rows rows{step.windows, ahead};  // this batch's last rows read `ahead` ahead
    // A loader's batches all have one type: the other vectors stay empty.
    switch (b.type) {
      case TokenType::Int64:
        b.tokens64.resize(n);
        read_rows(rows, b.tokens64.data(), b.cols);
        break;
      case TokenType::Int32:
        b.tokens32.resize(n);
        read_rows(rows, b.tokens32.data(), b.cols);
        break;
      case TokenType::Stored:
        b.stored.resize(n * b.token_bytes);
        read_rows(rows, b.stored.data(), b.cols * b.token_bytes);
        break;
    }
  }

  // A batch's windows, then the next step's first few (read ahead only).
  struct Rows {
    const std::vector<std::uint64_t>& windows;
    const Ahead& ahead;
  };

  // How many of the next step's windows to read ahead, decided when the
  // first of them is needed.
  std::size_t ahead_rows(const Ahead& a) const {
    if (a.block != kOwn && dispatched.load(std::memory_order_relaxed) > a.block) return 0;
    return a.n_next;
  }

  // Windows sit at random places, so each is a cold start for the hardware
  // prefetcher and the TLB. While row i is copied, row i + kReadAhead is
  // pulled into L2 line by line alongside it (detail::copy_row): its DRAM
  // reads and page walk overlap the copies of the rows between. On the AMD
  // EPYC development VM this reads random 4 KiB windows at ~17 GB/s on one
  // core, against ~10 for the next row's head alone prefetched into L1 (the
  // scheme before) and ~19 for a sequential read(). The rows ahead run on
  // into the next step (unless another thread has it, see Ahead), so a
  // batch's last rows are not cold starts; the first ones were read ahead by
  // the previous step's fill when this thread made it, and get their heads
  // prefetched here otherwise. Rows inside one mapped shard (all but one
  // per shard boundary) are copied straight from the mapping; the rest
  // (boundary-crossing windows, pread) go through the ShardSet.
  template <class T>
  void read_rows(const Rows& r, T* out, std::uint64_t row_elems) const {
    const std::uint64_t T_ = cfg.context, cols = T_ + 1;
    const unsigned width = manifest.token_bytes;
    const std::size_t n = r.windows.size();
    if (n == 0) return;
    // Rows of the next step to read ahead, decided when the first is needed.
    std::optional<std::size_t> n_next;
    const auto source = [&](std::size_t i) -> const unsigned char* {
      if (i < n) return set->mapped(r.windows[i] * T_, cols);
      if (!n_next) n_next = ahead_rows(r.ahead);
      return i < n + *n_next ? set->mapped(r.ahead.next[i - n] * T_, cols) : nullptr;
    };
    constexpr std::size_t kRing = kReadAhead + 1;  // row i's source, found kReadAhead rows earlier
    const unsigned char* ring[kRing] = {};
    for (std::size_t i = 0; i < kReadAhead; ++i) {
      ring[i] = source(i);
      if (ring[i] != nullptr) __builtin_prefetch(ring[i], 0, 1);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char* src = ring[i % kRing];
      const unsigned char* ahead = source(i + kReadAhead);
      ring[(i + kReadAhead) % kRing] = ahead;
      T* row = out + i * row_elems;
      if (src != nullptr) {
        detail::copy_row(src, width, cols, row, ahead);
      } else {
        if (i + 1 < n) set->prefetch(r.windows[i + 1] * T_, cols);
        if constexpr (std::is_same_v<T, unsigned char>)
          set->read_raw(r.windows[i] * T_, cols, row);
        else
          set->read(r.windows[i] * T_, cols, row);
      }
    }
  }

  static bool covers(const std::shared_ptr<const PlanChunk>& c, std::uint64_t seq) {
    return c && seq >= c->first && seq - c->first < kPlanSteps;
  }

  // The chunk holding step `seq`, kept as `filler`'s own until it needs
  // another (so valid until this thread's next call).
  const PlanChunk& chunk_for(std::uint64_t seq, std::size_t filler) {
    auto& mine = fillers[filler].plan;
    if (covers(mine, seq)) return *mine;
    {
      const std::lock_guard lock(plan_mu);
      mine = plan;
    }
    if (covers(mine, seq)) return *mine;
    auto fresh = std::make_shared<PlanChunk>();
    fresh->first = seq / kPlanSteps * kPlanSteps;
    if (const auto at = sampler->advance(run_start, fresh->first))
      fresh->steps.resize(sampler->next_many(*at, kPlanSteps, fresh->steps));
    mine = fresh;
    // Publish it unless a later chunk is there already (from a thread ahead).
    const std::lock_guard lock(plan_mu);
    if (!plan || plan->first < fresh->first) plan = std::move(fresh);
    return *mine;
  }

  // Step `seq` of the run into `filler`'s step and the first windows of the
  // step after it into `next` (n_next of them); false when the run ended
  // before.
  bool planned(std::uint64_t seq, std::size_t filler, std::uint64_t* next, std::size_t& n_next) {
    const PlanChunk& c = chunk_for(seq, filler);
    const std::uint64_t i = seq - c.first;
    if (i >= c.steps.size()) return false;
    const Sampler::Step& s = c.steps[i];
    Sampler::Step& out = fillers[filler].step;
    out.windows.assign(s.windows.begin(), s.windows.end());
    out.epoch = s.epoch;
    out.after = s.after;
    const Sampler::Step* after = nullptr;
    if (i + 1 < c.steps.size()) {
      after = &c.steps[i + 1];
    } else if (c.steps.size() == kPlanSteps) {  // the run goes on: the next chunk (`c` may go)
      const PlanChunk& later = chunk_for(seq + 1, filler);
      if (!later.steps.empty()) after = &later.steps.front();
    }
    n_next = after ? std::min(kReadAhead, after->windows.size()) : 0;
    for (std::size_t k = 0; k < n_next; ++k) next[k] = after->windows[k];
    return true;
  }

  // Step `seq` (step k of its block) filled into `b` by `filler`; false when
  // the run ended before it.
  bool fill_step(std::uint64_t block, std::size_t k, std::size_t filler, Batch& b) {
    const std::uint64_t seq = block * group + k;
    std::uint64_t next[kReadAhead];
    std::size_t n_next = 0;
    if (!planned(seq, filler, next, n_next)) return false;
    if (k == 0) hint_ahead(block);
    fill(fillers[filler].step, {next, n_next, k + 1 < group ? kOwn : block + 1}, b);
    return true;
  }

  // Claims the next block for a ring slot, or returns false when none may
  // be claimed now: ring full, the slot still held by the filler of a
  // stolen block, the end or an error met, stopping.
  bool claim(std::uint64_t& block) {
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

  static bool has_storage(const Batch& b) {
    return b.tokens64.capacity() + b.tokens32.capacity() + b.stored.capacity() > 0;
  }

  // Buffers into `filler`'s pool (those with storage; `from` is emptied).
  void push_buffers(std::size_t filler, std::vector<Batch>& from) {
    Filler& f = fillers[filler];
    const std::lock_guard lock(f.mu);
    for (auto& b : from)
      if (has_storage(b)) f.pool.push_back(std::move(b));
    from.clear();
  }

  void push_buffer(std::size_t filler, Batch&& b) {
    if (!has_storage(b)) return;
    Filler& f = fillers[filler];
    const std::lock_guard lock(f.mu);
    f.pool.push_back(std::move(b));
  }

  // A buffer of `filler`'s pool (empty if it has none: fill() allocates).
  Batch pop_buffer(std::size_t filler) {
    Filler& f = fillers[filler];
    const std::lock_guard lock(f.mu);
    if (f.pool.empty()) return {};
    Batch b = std::move(f.pool.back());
    f.pool.pop_back();
    return b;
  }

  // Buffers of `filler`'s pool into the empty Batches of `to` (any left
  // empty are allocated by fill()).
  void pop_buffers(std::size_t filler, std::vector<Batch>& to) {
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
  void wake_producers(bool any) {
    if (producers_sleeping.load() == 0) return;
    if (!any && dispatched.load() - consumed.load() > n_slots / 2) return;
    const std::lock_guard lock(mu);
    producer_cv.notify_all();
  }

  void announce() {
    events.fetch_add(1);
    if (consumer_sleeping.load()) {
      const std::lock_guard lock(mu);
      consumer_cv.notify_one();
    }
  }

  // Fills claimed block `block` into its slot with buffers of `filler`'s
  // pool and publishes it. The end or an error is published with the steps
  // before it, and nothing is claimed after it.
  void complete(std::uint64_t block, std::size_t filler) {
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
  void hint_ahead(std::uint64_t block) {
    if (cfg.readahead == 0) return;
    const std::uint64_t first = block * group;
    const std::uint64_t target = first + group + cfg.readahead;
    std::uint64_t h = hinted.load();
    while (h < target && !hinted.compare_exchange_weak(h, target)) {
    }
    Sampler::Step scratch;
    for (std::uint64_t k = std::max(h, first + 1); k < target; ++k) {
      try {
        const auto at = sampler->advance(run_start, k);
        if (!at || !sampler->next(*at, scratch)) return;
      } catch (...) {
        return;
      }
      for (const auto w : scratch.windows) set->readahead(w * cfg.context, cfg.context + 1);
    }
  }

  void run(std::size_t filler) {
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
  void size_ring() {
    const std::uint64_t elem = cfg.token_type == TokenType::Int64   ? 8
                               : cfg.token_type == TokenType::Int32 ? 4
                                                                    : manifest.token_bytes;
    const std::uint64_t batch_bytes =
        std::max<std::uint64_t>(1, cfg.batch_size * (cfg.context + 1) * elem);
    group = static_cast<std::size_t>(std::clamp<std::uint64_t>(
        std::min<std::uint64_t>(kBlockBytes / batch_bytes, cfg.prefetch / kMinSlots), 1,
        cfg.prefetch));
    n_slots = std::max<std::size_t>(1, cfg.prefetch / group);
  }

  void start() {
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
    run_start = pos;
    plan.reset();  // no worker runs here
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
  void halt() {
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

  bool next_sync(Batch& b) {
    if (!sampler->next(pos, sync_step)) return false;
    std::uint64_t next[kReadAhead];
    fill(sync_step, {next, sampler->peek(sync_step.after, kReadAhead, next), kOwn}, b);
    pos = sync_step.after;
    return true;
  }

  // The caller is done with a block: others may claim its slot's next use,
  // and the workers' buffers go back to their pools.
  void release(std::uint64_t block) {
    consumed.store(block + 1);
    for (std::size_t f = 1; f < n_fillers; ++f)
      if (!cur.give_back[f].empty()) push_buffers(f, cur.give_back[f]);
    wake_producers(false);
    cur.kind = Cursor::kNone;
  }

  // The next step of the caller's own block, filled straight into `b`.
  bool next_own(Batch& b) {
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
  void next_taken(Batch& b) {
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
  void free_slot() {
    Slot& slot = *cur.slot;
    cur.end_after = slot.end;
    cur.error_after = slot.error;
    slot.filled = 0;
    slot.state.store(kFree);
    release(cur.block);
  }

  // Makes block `consumed` the caller's: published in its slot, or claimed
  // or taken over to fill itself; fills later blocks while a worker has it.
  void acquire() {
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

  bool next_prefetched(Batch& b) {
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
};

TokenLoader::TokenLoader(LoaderConfig config) : impl_(std::make_unique<Impl>()) {
  auto& d = *impl_;
  d.cfg = std::move(config);
  if (d.cfg.context == 0) throw InputError("loader: context width must be at least 1");
  const auto file = manifest_path(d.cfg.manifest);
  d.dir = file.parent_path();
  if (d.dir.empty()) d.dir = ".";
  d.manifest = load_manifest(file);
  const bool train = d.cfg.split == Split::Train;
  const auto& split = train ? d.manifest.train : d.manifest.validation;
  const std::string split_name = train ? "train" : "validation";
  d.set = std::make_unique<ShardSet>(d.dir, d.manifest, split, split_name, d.cfg.read_mode,
                                     d.cfg.verify, d.cfg.rank, d.cfg.world_size);
  d.windows = window_count(d.set->tokens(), d.cfg.context);
  if (d.windows == 0)
    throw InputError(file.string() + ": the " + split_name + " split has " +
                     std::to_string(d.set->tokens()) + " tokens, fewer than one window of " +
                     std::to_string(d.cfg.context + 1) + " (context + 1)");
  SamplerConfig sc;
  sc.windows = d.windows;
  sc.batch_size = d.cfg.batch_size;
  sc.rank = d.cfg.rank;
  sc.world_size = d.cfg.world_size;
  sc.shuffle = d.cfg.shuffle;
  sc.epochs = d.cfg.epochs;
  sc.max_steps = d.cfg.max_steps;
  try {
    d.sampler = std::make_unique<Sampler>(sc);
  } catch (const InputError& e) {
    throw InputError(file.string() + " (" + split_name + " split): " + e.what());
  }
  d.pos = Position{d.cfg.seed, 0, 0, 0};
  d.start();
}

TokenLoader::~TokenLoader() { impl_->halt(); }

bool TokenLoader::next(Batch& batch) {
  return impl_->cfg.prefetch == 0 ? impl_->next_sync(batch) : impl_->next_prefetched(batch);
}

Position TokenLoader::position() const { return impl_->pos; }

void TokenLoader::seek(const Position& p) {
  impl_->halt();
  impl_->pos = p;
  impl_->start();
}

std::uint64_t TokenLoader::tokens() const { return impl_->set->tokens(); }
std::uint64_t TokenLoader::windows() const { return impl_->windows; }
std::uint64_t TokenLoader::steps_per_epoch() const { return impl_->sampler->steps_per_epoch(); }
const Manifest& TokenLoader::manifest() const { return impl_->manifest; }
const LoaderConfig& TokenLoader::config() const { return impl_->cfg; }
std::filesystem::path TokenLoader::tokenizer_path() const {
  return impl_->dir / impl_->manifest.tokenizer.file;
}

}  // namespace wireup::data
