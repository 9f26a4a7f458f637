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

// Prefetch. Step k of a run (counted from the position of the last
// start()) is claimed by advancing the atomic counter `dispatched`; its
// windows come from the shared plan (kPlanSteps steps worked out at once,
// see PlanChunk), so claiming itself takes no lock. A worker fills step k in
// ring slot k % prefetch and publishes it with an atomic store; next() takes slot
// `consumed % prefetch` once published. The steady state takes no lock but
// the short ones of the buffer stack and the plan pointer, makes no system
// call and allocates only a plan chunk every kPlanSteps steps. (With the
// queue this replaced, a mutex, a std::map node and a condition variable per
// batch, the default used ~20% more CPU per byte than synchronous loading on
// one core; now ~3%.)
//
// The caller never waits for a worker if it can work instead:
// - its batch not yet claimed: it claims it and fills it straight into its
//   own Batch (no ring slot, no copy, its buffer is hot in cache);
// - its batch being filled by a worker: it fills later steps into their
//   slots (helping), and once the ring is full it fills its batch itself
//   and marks the worker's copy stolen (the worker drops it when done).
//   A worker descheduled mid-batch on a busy machine so costs a repeated
//   batch, not a stall of the training loop until it runs again.
// Buffers: each filling thread (the caller is filler 0, workers 1..n) has
// its own LIFO pool, and a buffer goes back to the pool of the thread that
// filled it. The buffers in use so stay few and in that thread's cache, and
// no thread writes over lines another core holds: with one shared pool the
// worker and the helping caller refilled each other's buffers, every line
// moved between the cores' caches, and the loader read 10.5 GB/s where it
// now reads 18 (2-core VM, 4 KiB windows). Ring slots cycling through all
// `prefetch` buffers measured ~10% slower still.
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
  struct alignas(64) Slot {
    std::atomic<int> state{kFree};
    bool end = false;          // the end of the run: no batch
    std::exception_ptr error;  // the sampler or the read failed
    Sampler::Step step;
    Batch batch;             // empty while the slot is free
    std::size_t filler = 0;  // the thread that filled `batch`
  };

  LoaderConfig cfg;
  std::filesystem::path dir;
  Manifest manifest;
  std::unique_ptr<ShardSet> set;
  std::unique_ptr<Sampler> sampler;
  std::uint64_t windows = 0;
  Position pos;  // after the last batch handed out

  std::unique_ptr<Slot[]> slots;  // cfg.prefetch of them
  Position run_start;             // pos at the last start(): step k is advance(run_start, k)
  // The counters every batch writes, each on its own cache line: a write to
  // one does not take the others away from the core reading them. `consumed`
  // is written by next() only.
  alignas(64) std::atomic<std::uint64_t> dispatched{0};  // steps claimed
  alignas(64) std::atomic<std::uint64_t> consumed{0};    // batches handed out
  alignas(64) std::atomic<std::uint64_t> events{0};      // publications, for a sleeping caller
  alignas(64) std::atomic<std::uint64_t> hinted{0};      // readahead: steps before it were hinted
  std::atomic<bool> dispatch_done{false};  // the end or an error was met: claim no more
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable producer_cv, consumer_cv;
  std::atomic<unsigned> producers_sleeping{0};
  std::atomic<bool> consumer_sleeping{false};
  std::size_t held_filler = 0;  // filled the Batch the caller holds (its last one)
  std::vector<std::thread> workers;
  Sampler::Step own_step;  // steps the caller fills itself

  // The run's steps, worked out kPlanSteps at a time (Sampler::next_many:
  // their windows' permutations interleave, about twice the speed of one
  // step at a time) and shared by all threads. Steps are claimed in order,
  // so one chunk serves the next kPlanSteps claims; a chunk is replaced, not
  // changed, so a thread still reading an older one is safe. (Not
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
  // threads give buffers back under its mutex) and the plan chunk it last
  // used, its own, read without any lock while it covers the step. A batch
  // of 4 KiB windows takes a few microseconds to fill; every cache line the
  // threads share and write per batch costs a transfer between their cores,
  // which on this VM is sometimes several times dearer than at others.
  struct alignas(64) Filler {
    std::mutex mu;
    std::vector<Batch> pool;  // most recent last
    std::shared_ptr<const PlanChunk> plan;
  };
  std::unique_ptr<Filler[]> fillers;  // the caller's is 0, worker i's is i
  std::size_t n_fillers = 0;
  // Sticky outcome once next() met it: later calls repeat it.
  bool ended = false;
  std::exception_ptr failed;

  // The next step's first windows, read ahead by a batch's last rows, and
  // that step's number: if another thread has claimed it by the time they
  // are read, they are not. Lines pulled into this core's L2 would reach the
  // other core by a transfer between the two, dearer than DRAM when the two
  // vCPUs sit in different core complexes: with the worker and the helping
  // caller taking turns, that read-ahead cost ~10% of the loader's rate.
  struct Ahead {
    const std::uint64_t* next = nullptr;
    std::size_t n_next = 0;
    std::uint64_t step = kUnclaimed;  // kUnclaimed: read ahead regardless (no threads)
  };
  static constexpr std::uint64_t kUnclaimed = ~std::uint64_t{0};

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
    if (a.step != kUnclaimed && dispatched.load(std::memory_order_relaxed) > a.step) return 0;
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

  // Step `seq` of the run into `out` and the first windows of the step
  // after it into `next` (n_next of them); false when the run ended before.
  bool planned(std::uint64_t seq, std::size_t filler, Sampler::Step& out, std::uint64_t* next,
               std::size_t& n_next) {
    const PlanChunk& c = chunk_for(seq, filler);
    const std::uint64_t i = seq - c.first;
    if (i >= c.steps.size()) return false;
    const Sampler::Step& s = c.steps[i];
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

  // Claims the next step for a ring slot, or returns false when none may
  // be claimed now: ring full, the slot still held by the filler of a
  // stolen batch, the end or an error met, stopping.
  bool claim(std::uint64_t& seq) {
    std::uint64_t d = dispatched.load();
    for (;;) {
      if (stop.load() || dispatch_done.load()) return false;
      // A stale `consumed` only under-counts the room.
      if (d - consumed.load() >= cfg.prefetch) return false;
      // Free stays free until step d's claimer marks it: the check holds.
      Slot& slot = slots[d % cfg.prefetch];
      if (slot.state.load() != kFree) return false;
      if (dispatched.compare_exchange_weak(d, d + 1)) {
        slot.state.store(kClaimed);
        seq = d;
        return true;
      }
    }
  }

  void push_buffer(std::size_t filler, Batch&& b) {
    Filler& f = fillers[filler];
    const std::lock_guard lock(f.mu);
    f.pool.push_back(std::move(b));
  }

  // A buffer of `filler`'s pool (empty if it has none: fill() allocates).
  Batch pop_buffer(std::size_t filler) {
    Filler& f = fillers[filler];
    const std::lock_guard lock(f.mu);
    auto& pool = f.pool;
    if (pool.empty()) return {};
    Batch b = std::move(pool.back());
    pool.pop_back();
    return b;
  }

  // Wakes sleeping workers when the ring has room for a run of them (or
  // always, when `any`): they refill in runs instead of waking once per batch.
  void wake_producers(bool any) {
    if (producers_sleeping.load() == 0) return;
    if (!any && dispatched.load() - consumed.load() > cfg.prefetch / 2) return;
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

  // Works out claimed step `seq`, fills its slot with a buffer of
  // `filler`'s pool and publishes it. The end or an error is published like
  // a batch, and nothing is claimed after it.
  void complete(std::uint64_t seq, std::size_t filler) {
    Slot& slot = slots[seq % cfg.prefetch];
    slot.batch = pop_buffer(filler);
    slot.filler = filler;
    slot.end = false;
    slot.error = nullptr;
    bool have = false;
    try {
      std::uint64_t next[kReadAhead];
      std::size_t n_next = 0;
      have = planned(seq, filler, slot.step, next, n_next);
      if (have) {
        hint_ahead(seq);
        fill(slot.step, {next, n_next, seq + 1}, slot.batch);
      }
    } catch (...) {
      slot.error = std::current_exception();
    }
    const bool last = !have || slot.error;
    if (last) {
      slot.end = !slot.error;
      dispatch_done.store(true);
    }
    int claimed = kClaimed;
    if (!slot.state.compare_exchange_strong(claimed, kReady)) {
      // Stolen: the caller filled this step itself. Free the slot.
      push_buffer(filler, std::move(slot.batch));
      slot.batch = Batch{};
      slot.end = false;
      slot.error = nullptr;
      slot.state.store(kFree);
      wake_producers(true);
    }
    announce();
    if (last) wake_producers(true);  // to see dispatch_done and stop
  }

  // Keeps the kernel fetching the windows of the `readahead` steps after
  // `seq`, each step hinted once. Hints are advice: their errors are
  // ignored. The scratch Step is per call: readahead is for FSx, where a
  // window is a network round trip and an allocation is nothing.
  void hint_ahead(std::uint64_t seq) {
    if (cfg.readahead == 0) return;
    const std::uint64_t target = seq + 1 + cfg.readahead;
    std::uint64_t h = hinted.load();
    while (h < target && !hinted.compare_exchange_weak(h, target)) {
    }
    Sampler::Step scratch;
    for (std::uint64_t k = std::max(h, seq + 1); k < target; ++k) {
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
      std::uint64_t seq = 0;
      if (!claim(seq)) {
        std::unique_lock lock(mu);
        bool got = false;
        for (;;) {
          producers_sleeping.fetch_add(1);  // before the check: see above
          got = claim(seq);
          if (got || stop.load() || dispatch_done.load()) {
            producers_sleeping.fetch_sub(1);
            break;
          }
          producer_cv.wait(lock);
          producers_sleeping.fetch_sub(1);
        }
        if (!got) return;
      }
      complete(seq, filler);
    }
  }

  void start() {
    ended = false;
    failed = nullptr;
    if (cfg.prefetch == 0) return;
    const std::size_t n = std::clamp<std::size_t>(cfg.workers, 1, cfg.prefetch);
    if (!slots) {
      slots = std::make_unique<Slot[]>(cfg.prefetch);
      fillers = std::make_unique<Filler[]>(n + 1);
      n_fillers = n + 1;
    }
    run_start = pos;
    plan.reset();  // no worker runs here
    for (std::size_t f = 0; f < n_fillers; ++f) fillers[f].plan.reset();
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
    for (std::size_t i = 0; i < cfg.prefetch; ++i) {
      Slot& slot = slots[i];
      const Batch& b = slot.batch;
      if (b.tokens64.capacity() + b.tokens32.capacity() + b.stored.capacity() > 0)
        push_buffer(slot.filler, std::move(slot.batch));
      slot.batch = Batch{};
      slot.state = kFree;
      slot.end = false;
      slot.error = nullptr;
    }
  }

  bool next_sync(Batch& b) {
    if (!sampler->next(pos, own_step)) return false;
    std::uint64_t next[kReadAhead];
    fill(own_step, {next, sampler->peek(own_step.after, kReadAhead, next), kUnclaimed}, b);
    pos = own_step.after;
    return true;
  }

  // Step c, claimed or stolen by the caller, filled straight into `b`.
  bool fill_own(std::uint64_t c, Batch& b) {
    try {
      std::uint64_t next[kReadAhead];
      std::size_t n_next = 0;
      if (!planned(c, 0, own_step, next, n_next)) {
        ended = true;
        dispatch_done.store(true);
        wake_producers(true);
        return false;
      }
      hint_ahead(c);
      if (held_filler != 0) {  // b's buffer is a worker's: give it back, fill one of ours
        Batch mine = pop_buffer(0);
        push_buffer(held_filler, std::move(b));
        b = std::move(mine);
        held_filler = 0;
      }
      fill(own_step, {next, n_next, c + 1}, b);
    } catch (...) {
      failed = std::current_exception();
      dispatch_done.store(true);
      wake_producers(true);
      std::rethrow_exception(failed);
    }
    pos = b.after;
    consumed.store(c + 1);
    wake_producers(false);
    return true;
  }

  // Hands out published slot c.
  bool take(Slot& slot, std::uint64_t c, Batch& b) {
    if (slot.error) {
      failed = slot.error;
      std::rethrow_exception(failed);
    }
    if (slot.end) {
      ended = true;
      return false;
    }
    std::swap(b, slot.batch);
    pos = b.after;
    push_buffer(held_filler, std::move(slot.batch));  // the caller's previous buffer
    held_filler = slot.filler;
    slot.batch = Batch{};
    slot.state.store(kFree);
    consumed.store(c + 1);
    wake_producers(false);
    return true;
  }

  bool next_prefetched(Batch& b) {
    if (failed) std::rethrow_exception(failed);
    if (ended) return false;
    const std::uint64_t c = consumed.load(std::memory_order_relaxed);
    Slot& slot = slots[c % cfg.prefetch];
    for (;;) {
      const std::uint64_t seen = events.load();
      std::uint64_t d = dispatched.load();
      if (d == c) {  // not claimed yet: ours
        if (dispatched.compare_exchange_strong(d, c + 1)) return fill_own(c, b);
        continue;
      }
      int state = slot.state.load();
      if (state == kReady) return take(slot, c, b);
      std::uint64_t seq = 0;
      if (claim(seq)) {  // a worker has ours: fill a later one meanwhile
        complete(seq, 0);
        continue;
      }
      if (state == kClaimed) {  // nothing else to do: fill ours too, drop the worker's
        if (slot.state.compare_exchange_strong(state, kStolen)) return fill_own(c, b);
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
