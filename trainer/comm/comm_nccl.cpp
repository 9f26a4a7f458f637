// Built only with NCCL and the CUDA runtime (see CMakeLists.txt). Tensors are
// CUDA tensors of a CUDA LibTorch; here they are only pointers and sizes.
//
// Every communicator is non-blocking (ncclCommInitRankConfig, blocking = 0)
// and watched (nccl_watch.hpp): its init, every call that returns
// ncclInProgress, every collective the host waits for and, from a watchdog
// thread, every collective the compute stream waits for end within
// collective_timeout() or the communicator is aborted (ncclCommAbort) and the
// rank ends as a stalled one (PeerStalled: watchdog/recorded_comm.hpp prints
// the line, exit status 3), naming the ranks that did not arrive.
//
// In a --profile_steps window each collective's work on the NCCL stream is a
// device span (profile/device_trace.hpp), from after the stream's wait for its
// inputs to after the NCCL call, on the track "cuda nccl".
#include "comm/comm_nccl.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "comm/collective_deadline.hpp"
#include "comm/job_store.hpp"
#include "nccl_watch.hpp"  // private to this library
#include "profile/device_trace.hpp"
#include "wireup/error.hpp"

#ifdef WIREUP_HAVE_NCCL_BOOTSTRAP
#include "wireup/nccl_bootstrap.h"
#endif

namespace wireup::train {
namespace {

ncclDataType_t nccl_type(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat:
      return ncclFloat32;
    case at::kDouble:
      return ncclFloat64;
    case at::kBFloat16:
      return ncclBfloat16;
    case at::kHalf:
      return ncclFloat16;
    case at::kLong:
      return ncclInt64;
    case at::kInt:
      return ncclInt32;
    default:
      throw InputError("NCCL: unsupported tensor type");
  }
}

// The compute stream: the default one, which LibTorch's kernels run on (the
// device trace's compute_stream()).
cudaStream_t compute_cuda_stream() { return static_cast<cudaStream_t>(compute_stream().handle); }

// The compute stream waits for the collective; the host does not (the
// watchdog thread watches it). A collective that was aborted throws here.
class StreamPending final : public Pending {
 public:
  StreamPending(std::shared_ptr<NcclWatch> watch, std::shared_ptr<CudaEvent> done)
      : watch_(std::move(watch)), done_(std::move(done)) {}
  void wait() override {
    watch_->throw_if_failed();
    nccl_check(cudaStreamWaitEvent(compute_cuda_stream(), done_->get(), 0), "cudaStreamWaitEvent");
  }

 private:
  std::shared_ptr<NcclWatch> watch_;
  std::shared_ptr<CudaEvent> done_;
};

class NcclComm final : public Comm {
 public:
  NcclComm(ncclComm_t c, int rank, int size, c10::intrusive_ptr<c10d::Store> store,
           const std::string& key)
      : rank_(rank), size_(size) {
    nccl_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    nccl_check(cudaMalloc(&scratch_, sizeof(float)), "cudaMalloc");
    watch_ = std::make_shared<NcclWatch>(c, rank, size, std::move(store), key);
  }
  ~NcclComm() override {
    watch_->close();
    cudaFree(scratch_);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) override {
    const auto n = before();
    DeviceSpan span("all_gather", nccl_stream());
    watch_->call(
        ncclAllGather(shard.data_ptr(), full.data_ptr(), static_cast<size_t>(shard.numel()),
                      nccl_type(shard), watch_->comm(), stream_),
        "ncclAllGather", n);
    span.end();
    return std::make_unique<StreamPending>(watch_, watch_->watch_async(stream_, "all_gather", n));
  }
  std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                              const at::Tensor& shard) override {
    const auto n = before();
    DeviceSpan span("reduce_scatter", nccl_stream());
    watch_->call(
        ncclReduceScatter(full.data_ptr(), shard.data_ptr(), static_cast<size_t>(shard.numel()),
                          nccl_type(full), ncclSum, watch_->comm(), stream_),
        "ncclReduceScatter", n);
    span.end();
    return std::make_unique<StreamPending>(watch_,
                                           watch_->watch_async(stream_, "reduce_scatter", n));
  }
  void all_reduce_sum(const at::Tensor& t) override {
    const auto n = before();
    DeviceSpan span("all_reduce", nccl_stream());
    watch_->call(ncclAllReduce(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()),
                               nccl_type(t), ncclSum, watch_->comm(), stream_),
                 "ncclAllReduce", n);
    span.end();
    watch_->wait_host(stream_, "all_reduce", n);
  }
  void broadcast(const at::Tensor& t, int root) override {
    const auto n = before();
    DeviceSpan span("broadcast", nccl_stream());
    watch_->call(ncclBroadcast(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()),
                               nccl_type(t), root, watch_->comm(), stream_),
                 "ncclBroadcast", n);
    span.end();
    watch_->wait_host(stream_, "broadcast", n);
  }
  void barrier() override {
    const auto n = before();
    DeviceSpan span("barrier", nccl_stream());
    watch_->call(
        ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, watch_->comm(), stream_),
        "barrier", n);
    span.end();
    watch_->wait_host(stream_, "barrier", n);
  }

 private:
  // A failed communicator takes no more work; inputs were produced on the
  // compute (default) stream. Returns the collective's number in this group.
  std::uint64_t before() {
    watch_->throw_if_failed();
    CudaEvent ev;
    nccl_check(cudaEventRecord(ev.get(), compute_cuda_stream()), "cudaEventRecord");
    nccl_check(cudaStreamWaitEvent(stream_, ev.get(), 0), "cudaStreamWaitEvent");
    return ++count_;
  }
  DeviceStream nccl_stream() const { return {"nccl", stream_}; }
  int rank_, size_;
  cudaStream_t stream_{};
  void* scratch_ = nullptr;
  std::shared_ptr<NcclWatch> watch_;
  std::uint64_t count_ = 0;
};

std::shared_ptr<Comm> via_store(const c10::intrusive_ptr<c10d::Store>& store,
                                const std::string& key, int rank, int size) {
  if (size == 1) return make_solo_comm();
  return make_nccl_comm(store, key, rank, size);
}

// Rank 0's ncclUniqueId through the store: the others wait for it at most the
// store's timeout (--comm_init_timeout); a rank 0 that never publishes it is
// the missing one.
ncclUniqueId unique_id(c10d::Store& store, const std::string& key, int rank) {
  ncclUniqueId id;
  if (rank == 0) {
    nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const auto* p = reinterpret_cast<const std::uint8_t*>(&id);
    store.set(key, std::vector<std::uint8_t>(p, p + sizeof id));
    return id;
  }
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::uint8_t> bytes;
  try {
    bytes = store.get(key);
  } catch (const std::exception& e) {
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    throw PeerStalled({0}, waited,
                      "NCCL " + key + ": rank 0 did not publish the communicator's id in the " +
                          "job's store (" + std::string(e.what()).substr(0, 200) + ")");
  }
  if (bytes.size() != sizeof id) throw InputError("NCCL id from the store has a bad size");
  std::memcpy(&id, bytes.data(), sizeof id);
  return id;
}

}  // namespace

bool nccl_available() { return true; }

std::shared_ptr<Comm> make_nccl_comm(const c10::intrusive_ptr<c10d::Store>& store,
                                     const std::string& key, int rank, int size) {
  // Arrivals first: a rank that times out in the init names who never came.
  const std::string arrived = key + "/arrived/";
  store->set(arrived + std::to_string(rank), std::vector<std::uint8_t>{'1'});
  const ncclUniqueId id = unique_id(*store, key, rank);
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // returns at once; ncclCommGetAsyncError says when it is ready
  ncclComm_t c{};
  const auto r = ncclCommInitRankConfig(&c, size, id, rank, &config);
  if (r != ncclSuccess && r != ncclInProgress) nccl_check(r, "ncclCommInitRankConfig");
  await_nccl_init(c, *store, arrived, rank, size, key);
  return std::make_shared<NcclComm>(c, rank, size, store, key);
}

CommGroups make_nccl_groups(const WorldLayout& w, Sharding sharding) {
  nccl_check(cudaSetDevice(w.local_rank), "cudaSetDevice(LOCAL_RANK)");
  if (w.world == 1) return make_solo_groups();  // no store, no communicator
  const auto store = shared_job_store(w);       // kept: the peer group uses it too
  std::shared_ptr<Comm> world;
#ifdef WIREUP_HAVE_NCCL_BOOTSTRAP
  if (std::getenv("PMIX_RANK") != nullptr) {  // exec mode under srun --mpi=pmix
    ncclComm_t c{};
    int rank = 0, n = 0;
    nccl_check(wireup_nccl_comm_init(&c, &rank, &n), "wireup_nccl_comm_init");
    world = std::make_shared<NcclComm>(c, rank, n, store, "nccl/world");
  }
#endif
  if (!world) world = via_store(store, "nccl/world", w.rank, w.world);
  return arrange_groups(w, sharding, world, [&](const std::string& key, int rank, int size) {
    return via_store(store, "nccl/" + key, rank, size);
  });
}

}  // namespace wireup::train
