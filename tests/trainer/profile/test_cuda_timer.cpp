// The CUDA adapter of the DeviceTimer seam, against the real CUDA runtime.
// Without a GPU (CI) every CUDA call fails: the timer says which, and the
// device trace warns once and records nothing; with one, two marks on the
// compute stream resolve into one span on "cuda compute".
#include <catch2/catch.hpp>
#include <string>

#include "profile/cuda_timer.hpp"
#include "profile/device_trace.hpp"
#include "profile/step_trace.hpp"

using namespace wireup::train;

TEST_CASE("the CUDA timer fails cleanly without a GPU and times spans with one") {
  const auto probe = make_cuda_timer();
  REQUIRE(probe);
  const bool gpu = probe->record(0, compute_stream().handle);
  StepTrace steps;
  DeviceTrace dev(steps);
  const auto timer = make_cuda_timer();
  dev.install(timer.get());
  steps.set_window(1, 1);
  steps.start_step(1);
  REQUIRE(dev.on());
  const int s = dev.begin("forward", 0, compute_stream());
  dev.end(s);
  dev.end_step();
  steps.end_step();
  if (!gpu) {
    INFO(probe->error());
    CHECK(probe->error().rfind("cudaEventCreateWithFlags: ", 0) == 0);
    CHECK(s == -1);
    CHECK_FALSE(dev.on());
    CHECK(dev.warning().find("cudaEventCreateWithFlags: ") != std::string::npos);
    CHECK(steps.events().empty());
    return;
  }
  REQUIRE(dev.warning().empty());
  REQUIRE(steps.events().size() == 1);
  const auto e = steps.events()[0];
  CHECK(e.tid == kFirstDeviceTrackTid);
  CHECK(dev.tracks() == std::vector<std::string>{"cuda compute"});
  CHECK(e.dur_us >= 0);
  CHECK(e.ts_us <= StepTrace::now_us());
}
