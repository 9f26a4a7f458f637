#include <c10/cuda/CUDACachingAllocator.h>

#include "runtime/device_memory.hpp"

namespace wireup::train {

double device_peak_mib(c10::Device device) {
  if (!device.is_cuda()) return -1;
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
  // Index 0 is StatType::AGGREGATE (all pools) in LibTorch 1.13 and 2.x alike.
  return static_cast<double>(stats.allocated_bytes[0].peak) / (1024.0 * 1024.0);
}

}  // namespace wireup::train
