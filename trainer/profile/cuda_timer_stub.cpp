// Builds without a CUDA LibTorch: --device cuda is refused before any step,
// so there is no device to time.
#include "profile/cuda_timer.hpp"

namespace wireup::train {

std::unique_ptr<DeviceTimer> make_cuda_timer() { return nullptr; }

void install_cuda_timer() {}

}  // namespace wireup::train
