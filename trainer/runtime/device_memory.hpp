#pragma once
#include <c10/core/Device.h>

namespace wireup::train {

// Peak MiB of tensors the device's allocator has handed out (CUDA: the
// caching allocator's peak of allocated bytes, what torch.cuda.max_memory_allocated
// reports), or a negative number for the CPU, where the trainer reports its
// peak resident set instead. device_memory_cuda.cpp in CUDA LibTorch builds,
// device_memory_cpu.cpp otherwise.
double device_peak_mib(c10::Device device);

}  // namespace wireup::train
