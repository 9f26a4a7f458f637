#include "profile/cuda_timer.hpp"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace wireup::train {
namespace {

class CudaTimer final : public DeviceTimer {
 public:
  // The events are left to the process's end: destroying them at exit could
  // run after the CUDA runtime has shut down.
  ~CudaTimer() override = default;

  bool record(std::size_t i, void* stream) override {
    while (events_.size() <= i) {
      cudaEvent_t e{};
      if (!ok(cudaEventCreateWithFlags(&e, cudaEventDefault), "cudaEventCreateWithFlags"))
        return false;
      events_.push_back(e);
    }
    auto* s = static_cast<cudaStream_t>(stream);
    return ok(cudaEventRecord(events_[i], s), "cudaEventRecord");
  }
  bool wait(std::size_t i) override {
    return i < events_.size() && ok(cudaEventSynchronize(events_[i]), "cudaEventSynchronize");
  }
  bool elapsed_ms(std::size_t from, std::size_t to, double* ms) override {
    float f = 0;
    if (from >= events_.size() || to >= events_.size() ||
        !ok(cudaEventElapsedTime(&f, events_[from], events_[to]), "cudaEventElapsedTime"))
      return false;
    *ms = f;
    return true;
  }
  std::string error() const override { return error_; }

 private:
  bool ok(cudaError_t r, const char* what) {
    if (r == cudaSuccess) return true;
    error_ = std::string(what) + ": " + cudaGetErrorString(r);
    return false;
  }
  std::vector<cudaEvent_t> events_;
  std::string error_ = "no such CUDA event";
};

}  // namespace

std::unique_ptr<DeviceTimer> make_cuda_timer() { return std::make_unique<CudaTimer>(); }

void install_cuda_timer() {
  static const std::unique_ptr<DeviceTimer> timer = make_cuda_timer();
  device_trace().install(timer.get());
}

}  // namespace wireup::train
