#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

// Collectives among the ranks of one node through one POSIX shared-memory
// segment: each byte crosses between processes by one memcpy instead of
// loopback TCP's two kernel copies and Gloo's staging copies. Plain C++, no
// Torch: comm_shm.cpp puts the Comm interface around it.
//
// Layout: a header (magic, size, per-rank pid and phase counter), then per
// rank two halves of `slot_bytes` each. A collective moves its data in chunks
// of at most one half; each chunk is one phase: write into my half of this
// phase's parity, publish the phase, wait until every rank published it, read
// the others' halves. A half is written again two phases later, when every
// rank has published the phase in between, so it has finished reading: one
// barrier per chunk. Waiting spins briefly, then sleeps on a futex; while
// asleep it checks that the ranks it waits for are alive.
namespace wireup::train {

// Setting up or attaching failed (no /dev/shm space, another PID namespace,
// a segment of another shape): the caller falls back to another transport.
class ShmUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ShmGroup {
 public:
  static constexpr std::size_t kDefaultSlotBytes = std::size_t{8} << 20;

  // Rank 0 makes the segment under `name` ("/..."); the others attach to it.
  // Both throw ShmUnavailable with the reason.
  static std::unique_ptr<ShmGroup> create(const std::string& name, int size,
                                          std::size_t slot_bytes = kDefaultSlotBytes);
  static std::unique_ptr<ShmGroup> attach(const std::string& name, int rank, int size);
  ~ShmGroup();
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  // Removes the name (the mappings stay): once every rank has attached.
  void unlink();

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::size_t slot_bytes() const { return slot_bytes_; }
  // How long a rank waits for the others before giving up: `t`, or when
  // unset, the process-wide collective_timeout() (collective_deadline.hpp)
  // at each wait. A timeout throws PeerStalled naming the ranks not arrived.
  void set_timeout(std::chrono::milliseconds t) { timeout_ = t; }

  // full[k*bytes, (k+1)*bytes) <- rank k's `shard` (bytes each).
  void all_gather(const void* shard, void* full, std::size_t bytes);
  // shard[i] <- sum over ranks k (in rank order) of full_k[rank*n + i].
  void reduce_scatter_sum(const float* full, float* shard, std::size_t n);
  void reduce_scatter_sum(const double* full, double* shard, std::size_t n);
  // data <- elementwise sum over ranks, in rank order (every rank the same bits).
  void all_reduce_sum(float* data, std::size_t n);
  void all_reduce_sum(double* data, std::size_t n);
  void broadcast(void* data, std::size_t bytes, int root);
  void barrier();

  // Another rank whose process has ended ("rank K (pid P)"), else empty.
  // Reads only the ranks' pids: safe beside a collective in another thread.
  std::string exited_member() const;

 private:
  struct Header;
  ShmGroup(void* base, std::size_t bytes, int rank, int size, std::size_t slot_bytes,
           std::string name);
  unsigned char* half(int rank, std::uint32_t phase) const;
  std::uint32_t publish();             // the next phase, published by this rank
  void wait_all(std::uint32_t phase);  // until every rank published `phase`
  void wait_rank(int k, std::uint32_t phase, std::chrono::steady_clock::time_point deadline);
  [[noreturn]] void stalled(int k, std::uint32_t phase) const;
  std::chrono::milliseconds timeout() const;
  template <typename T>
  void reduce_scatter(const T* full, T* shard, std::size_t n);
  template <typename T>
  void all_reduce(T* data, std::size_t n);

  void* base_;
  std::size_t bytes_;
  Header* header_;
  unsigned char* data_;
  int rank_, size_;
  std::size_t slot_bytes_;
  std::string name_;
  std::uint32_t phase_ = 0;
  std::chrono::milliseconds timeout_{0};  // 0: collective_timeout()
};

}  // namespace wireup::train
