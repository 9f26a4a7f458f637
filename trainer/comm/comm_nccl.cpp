// Built only with NCCL and the CUDA runtime (see CMakeLists.txt). Tensors are
// CUDA tensors of a CUDA LibTorch; here they are only pointers and sizes.
#include "comm/comm_nccl.hpp"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "comm/job_store.hpp"
#include "wireup/error.hpp"

#ifdef WIREUP_HAVE_NCCL_BOOTSTRAP
#include "wireup/nccl_bootstrap.h"
#endif

namespace wireup::train {
namespace {

void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + ": " + ncclGetErrorString(r));
}
void check(cudaError_t r, const char* what) {
  if (r != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(r));
}

ncclDataType_t nccl_type(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kFloat: return ncclFloat32;
    case at::kDouble: return ncclFloat64;
    case at::kBFloat16: return ncclBfloat16;
    case at::kHalf: return ncclFloat16;
    case at::kLong: return ncclInt64;
    case at::kInt: return ncclInt32;
    default: throw InputError("NCCL: unsupported tensor type");
  }
}

class StreamPending final : public Pending {
 public:
  explicit StreamPending(cudaStream_t s) {
    check(cudaEventCreateWithFlags(&ev_, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventRecord(ev_, s), "cudaEventRecord");
  }
  ~StreamPending() override { cudaEventDestroy(ev_); }
  // The compute stream waits for the collective; the host does not.
  void wait() override { check(cudaStreamWaitEvent(nullptr, ev_, 0), "cudaStreamWaitEvent"); }

 private:
  cudaEvent_t ev_{};
};

class NcclComm final : public Comm {
 public:
  NcclComm(ncclComm_t c, int rank, int size) : comm_(c), rank_(rank), size_(size) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaMalloc(&scratch_, sizeof(float)), "cudaMalloc");
  }
  ~NcclComm() override {
    ncclCommDestroy(comm_);
    cudaFree(scratch_);
    cudaStreamDestroy(stream_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  std::unique_ptr<Pending> all_gather(const at::Tensor& shard, const at::Tensor& full) override {
    after_compute();
    check(ncclAllGather(shard.data_ptr(), full.data_ptr(), static_cast<size_t>(shard.numel()),
                        nccl_type(shard), comm_, stream_), "ncclAllGather");
    return std::make_unique<StreamPending>(stream_);
  }
  std::unique_ptr<Pending> reduce_scatter_sum(const at::Tensor& full,
                                              const at::Tensor& shard) override {
    after_compute();
    check(ncclReduceScatter(full.data_ptr(), shard.data_ptr(), static_cast<size_t>(shard.numel()),
                            nccl_type(full), ncclSum, comm_, stream_), "ncclReduceScatter");
    return std::make_unique<StreamPending>(stream_);
  }
  void all_reduce_sum(const at::Tensor& t) override {
    after_compute();
    check(ncclAllReduce(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()), nccl_type(t),
                        ncclSum, comm_, stream_), "ncclAllReduce");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void broadcast(const at::Tensor& t, int root) override {
    after_compute();
    check(ncclBroadcast(t.data_ptr(), t.data_ptr(), static_cast<size_t>(t.numel()), nccl_type(t),
                        root, comm_, stream_), "ncclBroadcast");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }
  void barrier() override {
    check(ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm_, stream_), "barrier");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  // Inputs were produced on the compute (default) stream.
  void after_compute() {
    cudaEvent_t ev{};
    check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    check(cudaEventRecord(ev, nullptr), "cudaEventRecord");
    check(cudaStreamWaitEvent(stream_, ev, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(ev);
  }
  ncclComm_t comm_;
  int rank_, size_;
  cudaStream_t stream_{};
  void* scratch_ = nullptr;
};

std::shared_ptr<Comm> via_store(c10d::Store& store, const std::string& key, int rank, int size) {
  if (size == 1) return make_solo_comm();
  return make_nccl_comm(store, key, rank, size);
}

}  // namespace

bool nccl_available() { return true; }

std::shared_ptr<Comm> make_nccl_comm(c10d::Store& store, const std::string& key, int rank,
                                     int size) {
  ncclUniqueId id;
  if (rank == 0) {
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    const auto* p = reinterpret_cast<const std::uint8_t*>(&id);
    store.set(key, std::vector<std::uint8_t>(p, p + sizeof id));
  } else {
    const auto bytes = store.get(key);
    if (bytes.size() != sizeof id) throw InputError("NCCL id from the store has a bad size");
    std::memcpy(&id, bytes.data(), sizeof id);
  }
  ncclComm_t c{};
  check(ncclCommInitRank(&c, size, id, rank), "ncclCommInitRank");
  return std::make_shared<NcclComm>(c, rank, size);
}

CommGroups make_nccl_groups(const WorldLayout& w, Sharding sharding) {
  check(cudaSetDevice(w.local_rank), "cudaSetDevice(LOCAL_RANK)");
  if (w.world == 1) return make_solo_groups();  // no store, no communicator
  const auto store = open_job_store(w);
  std::shared_ptr<Comm> world;
#ifdef WIREUP_HAVE_NCCL_BOOTSTRAP
  if (std::getenv("PMIX_RANK") != nullptr) {  // exec mode under srun --mpi=pmix
    ncclComm_t c{};
    int rank = 0, n = 0;
    check(wireup_nccl_comm_init(&c, &rank, &n), "wireup_nccl_comm_init");
    world = std::make_shared<NcclComm>(c, rank, n);
  }
#endif
  if (!world) world = via_store(*store, "nccl/world", w.rank, w.world);
  return arrange_groups(w, sharding, world, [&](const std::string& key, int rank, int size) {
    return via_store(*store, "nccl/" + key, rank, size);
  });
}

}  // namespace wireup::train
