#pragma once
// The NCCL backend's watchdog (comm_nccl.cpp's half that never waits
// forever). Private to wireup_train_nccl: it names NCCL and CUDA types.
#include <c10/util/intrusive_ptr.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace c10d {
class Store;
}

namespace wireup::train {

void nccl_check(ncclResult_t r, const char* what);
void nccl_check(cudaError_t r, const char* what);

// One CUDA event without timing, owned.
class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return ev_; }

 private:
  cudaEvent_t ev_{};
};

// Waits for a non-blocking communicator's init (ncclCommInitRankConfig) at
// most collective_timeout(): past it the communicator is aborted and
// PeerStalled names the ranks that never wrote their ARRIVED + RANK key.
void await_nccl_init(ncclComm_t c, c10d::Store& store, const std::string& arrived, int rank,
                     int size, const std::string& key);

// One communicator's deadlines. The host-side waits (call(), wait_host()) poll
// in the calling thread; collectives only the compute stream waits for
// (watch_async()) are polled by a thread every 50 ms, which also reads
// ncclCommGetAsyncError. Past collective_timeout(), or on an asynchronous
// error, the communicator is aborted (ncclCommAbort: its kernels end, so the
// process can), the ranks that did not reach the same collective are asked
// through the store (ranks_not_at), and the next call on this communicator
// throws PeerStalled. If the main thread does not end the process within the
// grace after that (it is stuck elsewhere), the watchdog thread prints the
// stall line itself and exits with kExitPeerStalled.
class NcclWatch {
 public:
  NcclWatch(ncclComm_t c, int rank, int size, c10::intrusive_ptr<c10d::Store> store,
            std::string key);
  ~NcclWatch();
  NcclWatch(const NcclWatch&) = delete;
  NcclWatch& operator=(const NcclWatch&) = delete;

  ncclComm_t comm() const { return comm_; }
  // The result of an NCCL call that enqueues collective `n`: ncclInProgress
  // is waited out (non-blocking communicators return it), errors throw.
  void call(ncclResult_t r, const char* what, std::uint64_t n);
  // The stream's work so far, watched by the thread; the event completes
  // with it.
  std::shared_ptr<CudaEvent> watch_async(cudaStream_t s, const char* kind, std::uint64_t n);
  // Blocks until the stream's work so far is done (or the deadline).
  void wait_host(cudaStream_t s, const char* kind, std::uint64_t n);
  // Throws PeerStalled once the communicator was aborted.
  void throw_if_failed();
  // Stops the thread and destroys (or leaves aborted) the communicator.
  void close();

 private:
  struct Inflight {
    std::shared_ptr<CudaEvent> done;
    const char* kind;
    std::uint64_t n;
    std::chrono::steady_clock::time_point since;
  };
  struct Failure {
    std::vector<int> missing;
    double waited_s;
    std::string detail;
  };
  void run();
  bool poll_async_error(std::string* why);
  // Aborts once; fills failure_ (the store asked for the missing ranks).
  void abort_stalled(const char* kind, std::uint64_t n, double waited_s, const std::string& why);
  [[noreturn]] void exit_stalled();

  ncclComm_t comm_;
  int rank_, size_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::string key_;
  int device_ = 0;

  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Inflight> inflight_;
  bool stop_ = false, closed_ = false;
  std::optional<Failure> failure_;
  std::atomic<bool> aborting_{false};
  std::thread thread_;
};

}  // namespace wireup::train
