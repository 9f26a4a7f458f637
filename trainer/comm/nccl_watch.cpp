#include "nccl_watch.hpp"

#include <unistd.h>  // _exit

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "comm/collective_deadline.hpp"
#include "comm/job_store.hpp"

namespace wireup::train {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A communicator's state in one read: ncclSuccess (ready), ncclInProgress (an
// init or a call still running), or the error that ended it.
ncclResult_t comm_state(ncclComm_t c) {
  ncclResult_t state = ncclInProgress;
  const ncclResult_t r = ncclCommGetAsyncError(c, &state);
  return r != ncclSuccess ? r : state;
}

std::string error_text(ncclComm_t c, ncclResult_t s) {
  return std::string("NCCL error: ") + ncclGetErrorString(s) + " (" + ncclGetLastError(c) + ")";
}

// How long the watchdog thread leaves the main thread to end the process
// after an abort, before it ends it itself.
constexpr auto kMainThreadGrace = std::chrono::seconds(15);

}  // namespace

void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess && r != ncclInProgress)
    throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
void nccl_check(cudaError_t r, const char* what) {
  if (r != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(r));
}

CudaEvent::CudaEvent() {
  nccl_check(cudaEventCreateWithFlags(&ev_, cudaEventDisableTiming), "cudaEventCreate");
}
CudaEvent::~CudaEvent() { cudaEventDestroy(ev_); }

void await_nccl_init(ncclComm_t c, c10d::Store& store, const std::string& arrived, int rank,
                     int size, const std::string& key) {
  const auto t0 = Clock::now();
  for (;;) {
    const ncclResult_t s = comm_state(c);
    if (s == ncclSuccess) return;
    if (s != ncclInProgress) {
      ncclCommAbort(c);
      throw std::runtime_error("NCCL communicator " + key +
                               " failed to start: " + ncclGetErrorString(s));
    }
    if (Clock::now() - t0 > collective_timeout()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ncclCommAbort(c);
  std::vector<int> missing;
  try {
    for (int r = 0; r < size; ++r)
      if (r != rank && !store.check({arrived + std::to_string(r)})) missing.push_back(r);
  } catch (const std::exception&) {
    missing.clear();  // the store is gone too
  }
  const double waited = seconds_since(t0);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", waited);
  throw PeerStalled(std::move(missing), waited,
                    "NCCL communicator " + key + " (" + std::to_string(size) +
                        " ranks) did not start within " + buf +
                        " s (--comm_init_timeout); it was aborted");
}

NcclWatch::NcclWatch(ncclComm_t c, int rank, int size, c10::intrusive_ptr<c10d::Store> store,
                     std::string key)
    : comm_(c), rank_(rank), size_(size), store_(std::move(store)), key_(std::move(key)) {
  nccl_check(cudaGetDevice(&device_), "cudaGetDevice");
  thread_ = std::thread([this] { run(); });
}

NcclWatch::~NcclWatch() { close(); }

void NcclWatch::close() {
  {
    std::lock_guard<std::mutex> lock(m_);
    if (closed_) return;
    closed_ = true;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!aborting_.load()) ncclCommDestroy(comm_);  // an aborted one is freed already
}

void NcclWatch::call(ncclResult_t r, const char* what, std::uint64_t n) {
  if (r == ncclSuccess) return;
  if (r != ncclInProgress) {
    throw_if_failed();  // the watchdog aborted it under us: the stall is the story
    throw std::runtime_error(std::string(what) + ": " + error_text(comm_, r));
  }
  const auto t0 = Clock::now();
  for (;;) {
    throw_if_failed();
    const ncclResult_t s = comm_state(comm_);
    if (s == ncclSuccess) return;
    if (s != ncclInProgress) {
      abort_stalled(what, n, seconds_since(t0), error_text(comm_, s));
      throw_if_failed();
    }
    if (Clock::now() - t0 > collective_timeout()) {
      abort_stalled(what, n, seconds_since(t0), "NCCL call did not return in time");
      throw_if_failed();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

std::shared_ptr<CudaEvent> NcclWatch::watch_async(cudaStream_t s, const char* kind,
                                                  std::uint64_t n) {
  auto done = std::make_shared<CudaEvent>();
  nccl_check(cudaEventRecord(done->get(), s), "cudaEventRecord");
  std::lock_guard<std::mutex> lock(m_);
  inflight_.push_back({done, kind, n, Clock::now()});
  return done;
}

void NcclWatch::wait_host(cudaStream_t s, const char* kind, std::uint64_t n) {
  CudaEvent done;
  nccl_check(cudaEventRecord(done.get(), s), "cudaEventRecord");
  const auto t0 = Clock::now();
  for (std::uint64_t spin = 0;; ++spin) {
    const cudaError_t q = cudaEventQuery(done.get());
    if (q == cudaSuccess) return;
    if (q != cudaErrorNotReady) nccl_check(q, kind);
    throw_if_failed();
    // Short collectives (a scalar all-reduce) end within microseconds: yield
    // first, then sleep, reading NCCL's error state as the thread does.
    if (spin < 2000) {
      std::this_thread::yield();
      continue;
    }
    std::string why;
    if (poll_async_error(&why)) {
      abort_stalled(kind, n, seconds_since(t0), why);
      throw_if_failed();
    }
    if (Clock::now() - t0 > collective_timeout()) {
      abort_stalled(kind, n, seconds_since(t0), "NCCL collective did not complete in time");
      throw_if_failed();
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

bool NcclWatch::poll_async_error(std::string* why) {
  const ncclResult_t s = comm_state(comm_);
  if (s == ncclSuccess || s == ncclInProgress) return false;
  *why = error_text(comm_, s);
  return true;
}

void NcclWatch::throw_if_failed() {
  if (!aborting_.load(std::memory_order_acquire)) return;
  std::unique_lock<std::mutex> lock(m_);
  cv_.wait_for(lock, not_arrived_grace() + std::chrono::seconds(5),
               [this] { return failure_.has_value(); });
  if (failure_) throw PeerStalled(failure_->missing, failure_->waited_s, failure_->detail);
  throw PeerStalled({}, 0, "NCCL communicator " + key_ + " was aborted");
}

void NcclWatch::abort_stalled(const char* kind, std::uint64_t n, double waited_s,
                              const std::string& why) {
  if (aborting_.exchange(true)) return;  // one abort; the others wait for its failure_
  ncclCommAbort(comm_);                  // its kernels end: nothing spins on the GPU for it
  auto missing = ranks_not_at(*store_, key_ + "/wd/at/", rank_, size_, n, not_arrived_grace());
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", waited_s);
  Failure f{std::move(missing), waited_s,
            why + ": " + kind + " #" + std::to_string(n) + " of NCCL communicator " + key_ +
                " after " + buf + " s; the communicator was aborted"};
  {
    std::lock_guard<std::mutex> lock(m_);
    failure_ = std::move(f);
  }
  cv_.notify_all();
}

void NcclWatch::exit_stalled() {
  Failure f;
  {
    std::lock_guard<std::mutex> lock(m_);
    if (failure_) f = *failure_;
  }
  report_stall(rank_, key_, f.waited_s, f.missing, f.detail);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(kExitPeerStalled);
}

void NcclWatch::run() {
  cudaSetDevice(device_);  // CUDA calls of a new thread default to device 0
  std::unique_lock<std::mutex> lock(m_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(50));
    if (stop_ || aborting_.load()) break;
    // Done collectives leave; the next one's clock starts when it could run.
    while (!inflight_.empty() && cudaEventQuery(inflight_.front().done->get()) == cudaSuccess) {
      inflight_.pop_front();
      if (!inflight_.empty())
        inflight_.front().since = std::max(inflight_.front().since, Clock::now());
    }
    std::string why;
    std::optional<Inflight> late;
    if (!inflight_.empty() && Clock::now() - inflight_.front().since > collective_timeout())
      late = inflight_.front();
    lock.unlock();
    const bool error = poll_async_error(&why);
    if (error || late) {
      const char* kind = late ? late->kind : "collective";
      const std::uint64_t n = late ? late->n : 0;
      const double waited = late ? seconds_since(late->since) : 0.0;
      abort_stalled(kind, n, waited, error ? why : "NCCL collective did not complete in time");
      lock.lock();
      // The main thread ends the process when it next touches this
      // communicator; if it is stuck elsewhere, end it from here.
      if (!cv_.wait_for(lock, kMainThreadGrace, [this] { return stop_; })) {
        lock.unlock();
        exit_stalled();
      }
      break;
    }
    lock.lock();
  }
}

}  // namespace wireup::train
