#include "wireup/data/loader.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
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
    case TokenType::Int64: return tokens64.data();
    case TokenType::Int32: return tokens32.data();
    case TokenType::Stored: return stored.data();
  }
  return nullptr;
}

void* Batch::data() { return const_cast<void*>(std::as_const(*this).data()); }

// Prefetch. Step k of a run (counted from the position of the last
// start()) is claimed by advancing the atomic counter `dispatched`;
// Sampler::advance maps k to its position in O(1) and the Sampler is
// stateless, so claiming takes no lock. A worker fills step k in ring slot
// k % prefetch and publishes it with an atomic store; next() takes slot
// `consumed % prefetch` once published. The steady state takes no lock but
// the short one of the buffer stack, makes no system call and allocates
// nothing. (With the queue this replaced, a mutex, a std::map node and a
// condition variable per batch, the default used ~20% more CPU per byte
// than synchronous loading on one core; now ~3%.)
//
// The caller never waits for a worker if it can work instead:
// - its batch not yet claimed: it claims it and fills it straight into its
//   own Batch (no ring slot, no copy, its buffer is hot in cache);
// - its batch being filled by a worker: it fills later steps into their
//   slots (helping), and once the ring is full it fills its batch itself
//   and marks the worker's copy stolen (the worker drops it when done).
//   A worker descheduled mid-batch on a busy machine so costs a repeated
//   batch, not a stall of the training loop until it runs again.
// Buffers: a slot borrows the most recently returned buffer (a LIFO stack
// of the callers' previous Batches), so the buffers in use stay few and in
// cache when the caller keeps up; ring slots cycling through all
// `prefetch` buffers measured ~10% slower at 4 KiB windows.
//
// Sleeping (a worker facing a full ring, or the caller in the short gap
// between a claim and its slot's "claimed" mark) uses `mu`: a sleeper
// announces itself in an atomic, re-checks under `mu`, then waits; a waker
// changes the state, then reads the announcement (all sequentially
// consistent) and notifies under `mu`. One of the two sees the other's
// write, so no wake-up is lost.
struct TokenLoader::Impl {
  enum : int { kFree, kClaimed, kReady, kStolen };
  struct alignas(64) Slot {
    std::atomic<int> state{kFree};
    bool end = false;          // the end of the run: no batch
    std::exception_ptr error;  // the sampler or the read failed
    Sampler::Step step;
    Batch batch;               // empty while the slot is free
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
  std::atomic<std::uint64_t> dispatched{0};  // steps claimed
  std::atomic<std::uint64_t> consumed{0};    // batches handed out (written by next() only)
  std::atomic<std::uint64_t> hinted{0};      // readahead: steps before this one were hinted
  std::atomic<std::uint64_t> events{0};      // counts publications, for a sleeping caller
  std::atomic<bool> dispatch_done{false};    // the end or an error was met: claim no more
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::condition_variable producer_cv, consumer_cv;
  std::atomic<unsigned> producers_sleeping{0};
  std::atomic<bool> consumer_sleeping{false};
  std::mutex buffers_mu;
  std::vector<Batch> buffers;  // returned by next(), most recent last
  std::vector<std::thread> workers;
  Sampler::Step own_step;  // steps the caller fills itself
  // Sticky outcome once next() met it: later calls repeat it.
  bool ended = false;
  std::exception_ptr failed;

  void fill(const Sampler::Step& step, Batch& b) const {
    const std::uint64_t T = cfg.context;
    b.rows = step.windows.size();
    b.cols = T + 1;
    b.type = cfg.token_type;
    b.windows.assign(step.windows.begin(), step.windows.end());
    b.epoch = step.epoch;
    b.after = step.after;
    b.token_bytes = manifest.token_bytes;
    const std::uint64_t n = b.rows * b.cols;
    // A loader's batches all have one type: the other vectors stay empty.
    switch (b.type) {
      case TokenType::Int64:
        b.tokens64.resize(n);
        read_rows(step.windows, b.tokens64.data(), b.cols);
        break;
      case TokenType::Int32:
        b.tokens32.resize(n);
        read_rows(step.windows, b.tokens32.data(), b.cols);
        break;
      case TokenType::Stored:
        b.stored.resize(n * b.token_bytes);
        read_rows(step.windows, b.stored.data(), b.cols * b.token_bytes);
        break;
    }
  }

  // Windows sit at random places, so each is a cold start for the hardware
  // prefetcher and, mostly, the TLB. While row i is converted, the next
  // row's lines are prefetched alongside it (detail::copy_row), and the
  // first line of row i+2 is touched early so its page walk and first DRAM
  // read are under way by then: measured together ~15% faster than
  // prefetching the next row's head alone, ~35% over no prefetch. Rows inside
  // one mapped shard (all but one per shard boundary) are copied straight
  // from the mapping; the rest (boundary-crossing windows, pread) go
  // through the ShardSet.
  template <class T>
  void read_rows(const std::vector<std::uint64_t>& rows, T* out, std::uint64_t row_elems) const {
    const std::uint64_t T_ = cfg.context, cols = T_ + 1;
    const unsigned width = manifest.token_bytes;
    const std::size_t n = rows.size();
    if (n == 0) return;
    const auto source = [&](std::size_t i) {
      return i < n ? set->mapped(rows[i] * T_, cols) : nullptr;
    };
    const unsigned char* src = source(0);
    const unsigned char* next = source(1);
    if (src != nullptr) set->prefetch(rows[0] * T_, cols);
    if (next != nullptr) __builtin_prefetch(next);
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char* after = source(i + 2);
      if (after != nullptr) __builtin_prefetch(after);
      T* row = out + i * row_elems;
      if (src != nullptr) {
        detail::copy_row(src, width, cols, row, next);
      } else {
        if (i + 1 < n) set->prefetch(rows[i + 1] * T_, cols);
        if constexpr (std::is_same_v<T, unsigned char>)
          set->read_raw(rows[i] * T_, cols, row);
        else
          set->read(rows[i] * T_, cols, row);
      }
      src = next;
      next = after;
    }
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

  void push_buffer(Batch&& b) {
    const std::lock_guard lock(buffers_mu);
    buffers.push_back(std::move(b));
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

  // Works out claimed step `seq`, fills its slot and publishes it. The end
  // or an error is published like a batch, and nothing is claimed after it.
  void complete(std::uint64_t seq) {
    Slot& slot = slots[seq % cfg.prefetch];
    {
      const std::lock_guard lock(buffers_mu);
      if (!buffers.empty()) {
        slot.batch = std::move(buffers.back());
        buffers.pop_back();
      }
    }
    slot.end = false;
    slot.error = nullptr;
    bool have = false;
    try {
      const auto at = sampler->advance(run_start, seq);
      have = at && sampler->next(*at, slot.step);
      if (have) {
        hint_ahead(seq);
        fill(slot.step, slot.batch);
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
      push_buffer(std::move(slot.batch));
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

  void run() {
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
      complete(seq);
    }
  }

  void start() {
    ended = false;
    failed = nullptr;
    if (cfg.prefetch == 0) return;
    if (!slots) {
      slots = std::make_unique<Slot[]>(cfg.prefetch);
      buffers.reserve(cfg.prefetch + 2);
    }
    run_start = pos;
    dispatched = 0;
    consumed = 0;
    hinted = 0;
    dispatch_done = false;
    stop = false;
    const std::size_t n = std::clamp<std::size_t>(cfg.workers, 1, cfg.prefetch);
    for (std::size_t i = 0; i < n; ++i) workers.emplace_back([this] { run(); });
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
      if (slot.batch.tokens64.capacity() + slot.batch.tokens32.capacity() +
              slot.batch.stored.capacity() > 0)
        push_buffer(std::move(slot.batch));
      slot.batch = Batch{};
      slot.state = kFree;
      slot.end = false;
      slot.error = nullptr;
    }
  }

  bool next_sync(Batch& b) {
    if (!sampler->next(pos, own_step)) return false;
    fill(own_step, b);
    pos = own_step.after;
    return true;
  }

  // Step c, claimed or stolen by the caller, filled straight into `b`.
  bool fill_own(std::uint64_t c, Batch& b) {
    try {
      const auto at = sampler->advance(run_start, c);
      if (!at || !sampler->next(*at, own_step)) {
        ended = true;
        dispatch_done.store(true);
        wake_producers(true);
        return false;
      }
      hint_ahead(c);
      fill(own_step, b);
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
    push_buffer(std::move(slot.batch));  // the caller's previous buffer
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
        complete(seq);
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
