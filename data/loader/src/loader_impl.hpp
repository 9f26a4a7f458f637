#pragma once
// Internal to wireup_data: TokenLoader's state. loader.cpp holds the public
// API, opening and the synchronous path; prefetch.cpp the prefetch threads
// and the ring that hands their batches to next().
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "packed_rows.hpp"
#include "row_reader.hpp"
#include "step_plan.hpp"
#include "wireup/data/loader.hpp"

namespace wireup::data {

// Prefetch. The steps of a run (counted from the position of the last
// start()) go in blocks of `group` consecutive steps: block k is steps
// [k * group, (k + 1) * group). A block is the unit every thread claims,
// fills and hands over: a block is claimed by advancing the atomic counter
// `dispatched`, filled by one thread into ring slot k % n_slots and published
// with one atomic store; next() hands out its batches one by one with no
// shared write, and frees the slot after the last. The windows come from the
// shared StepPlan, so claiming takes no lock. The steady state takes no lock
// but the short ones of the buffer pools and the plan pointer, makes no
// system call and allocates only a plan chunk every StepPlan::kChunkSteps
// steps.
//
// Why blocks: every shared line a hand-over writes moves between the cores'
// caches, and an atomic read-modify-write on it waits for the move, which
// costs most when the cores sit in different core complexes. A block of
// ~256 KiB (`kBlockBytes`) pays those moves once per several batches;
// batches of that size or more go one per block.
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
// filled it, so the buffers in use stay few and in that thread's cache and
// no thread writes over lines another core holds. The caller gives a
// worker's buffers back once per block, not once per batch.
//
// Sleeping (a worker facing a full ring, or the caller in the short gap
// between a claim and its slot's "claimed" mark) uses `mu`: a sleeper
// announces itself in an atomic, re-checks under `mu`, then waits; a waker
// changes the state, then reads the announcement (all sequentially
// consistent) and notifies under `mu`. One of the two sees the other's
// write, so no wake-up is lost.
struct TokenLoader::Impl {
  enum : int { kFree, kClaimed, kReady, kStolen };
  static constexpr std::size_t kReadAhead = detail::RowReader::kReadAhead;
  // Batch bytes a block aims at, and the fewest slots the ring keeps (so a
  // worker finds room while the caller holds one block and fills another).
  static constexpr std::uint64_t kBlockBytes = std::uint64_t{256} << 10;
  static constexpr std::size_t kMinSlots = 4;
  static constexpr std::uint64_t kOwn = detail::Ahead::kOwn;

  struct alignas(64) Slot {
    std::atomic<int> state{kFree};
    std::size_t filled = 0;      // batches[0, filled) hold the block's first steps
    bool end = false;            // the run ends after them
    std::exception_ptr error;    // the sampler or a read failed after them
    std::vector<Batch> batches;  // `group` of them; emptied as the caller takes them
    std::size_t filler = 0;      // the thread that filled them
  };

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

  // Per filling thread, on its own cache lines: its buffer pool (other
  // threads give buffers back under its mutex), its plan cache and the
  // step it is filling.
  struct alignas(64) Filler {
    std::mutex mu;
    std::vector<Batch> pool;  // most recent last
    detail::StepPlan::Cache plan;
    Sampler::Step step;
  };

  LoaderConfig cfg;
  std::filesystem::path dir;
  Manifest manifest;
  std::unique_ptr<ShardSet> set;
  std::unique_ptr<Sampler> sampler;
  std::unique_ptr<detail::RowReader> rows;
  std::unique_ptr<PackPlan> pack;                      // set: packed rows
  std::unique_ptr<detail::PackedRowReader> packed_rows;
  std::unique_ptr<detail::StepPlan> plan;
  std::uint64_t windows = 0;
  Position pos;  // after the last batch handed out

  std::size_t group = 1;          // steps per block
  std::size_t n_slots = 0;        // ring slots, each a block
  std::unique_ptr<Slot[]> slots;  // n_slots of them
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
  Cursor cur;
  std::unique_ptr<Filler[]> fillers;  // the caller's is 0, worker i's is i
  std::size_t n_fillers = 0;

  // loader.cpp: a step's rows into a batch; the synchronous path.
  void fill(const Sampler::Step& step, const detail::Ahead& ahead, Batch& b) const;
  void readahead_window(std::uint64_t w) const;
  bool next_sync(Batch& b);

  // prefetch.cpp: the ring.
  void start();
  void halt();
  bool next_prefetched(Batch& b);

 private:
  bool fill_step(std::uint64_t block, std::size_t k, std::size_t filler, Batch& b);
  bool claim(std::uint64_t& block);
  void push_buffers(std::size_t filler, std::vector<Batch>& from);
  void push_buffer(std::size_t filler, Batch&& b);
  Batch pop_buffer(std::size_t filler);
  void pop_buffers(std::size_t filler, std::vector<Batch>& to);
  void wake_producers(bool any);
  void announce();
  void complete(std::uint64_t block, std::size_t filler);
  void hint_ahead(std::uint64_t block);
  void run(std::size_t filler);
  void size_ring();
  void release(std::uint64_t block);
  bool next_own(Batch& b);
  void next_taken(Batch& b);
  void free_slot();
  void acquire();
};

}  // namespace wireup::data
