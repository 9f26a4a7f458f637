#pragma once
#include <memory>

#include "profile/device_trace.hpp"

// The DeviceTimer of a CUDA device: a mark is a CUDA event (timing on), made
// on the calling thread's current device at its number's first use and reused
// in later steps. Every CUDA call's result is checked; a failure is the
// timer's error (the device trace then warns once and records host spans
// only). Built against the CUDA toolkit's runtime wherever that is found
// (cuda_timer.cpp); wireup-train links it only with a CUDA LibTorch, else
// cuda_timer_stub.cpp.
namespace wireup::train {

// A timer on the CUDA runtime; nullptr where this build has none (the stub).
std::unique_ptr<DeviceTimer> make_cuda_timer();

// --device cuda: device_trace() times its spans with a CUDA timer kept for the
// process's life; nothing where this build has none.
void install_cuda_timer();

}  // namespace wireup::train
