// The device side of --profile_steps through a fake DeviceTimer: each mark
// completes at the device time the test set when it was recorded.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "profile/device_trace.hpp"
#include "profile/step_trace.hpp"

using namespace wireup::train;

namespace {

struct FakeTimer final : DeviceTimer {
  double device_ms = 0;  // the device's clock now
  std::map<std::size_t, double> at_ms;
  std::map<std::size_t, void*> on_stream;
  std::size_t records = 0, waits = 0;
  std::size_t fail_record_after = SIZE_MAX;  // records that succeed before one fails
  bool record(std::size_t i, void* stream) override {
    if (records++ >= fail_record_after) return false;
    at_ms[i] = device_ms;
    on_stream[i] = stream;
    return true;
  }
  bool wait(std::size_t i) override {
    ++waits;
    return at_ms.count(i) == 1;
  }
  bool elapsed_ms(std::size_t from, std::size_t to, double* ms) override {
    if (!at_ms.count(from) || !at_ms.count(to)) return false;
    *ms = at_ms[to] - at_ms[from];
    return true;
  }
  std::string error() const override { return "cudaEventRecord: fake failure"; }
};

// A host clock the test moves.
struct FakeHost {
  std::int64_t us = 0;
  std::int64_t step_us = 0;  // added after each reading
  std::int64_t read() {
    const auto t = us;
    us += step_us;
    return t;
  }
};

int nccl_stream_a = 0, nccl_stream_b = 0;  // addresses as stream handles

// A device trace over its own StepTrace, a fake timer and a host clock that
// stands still, with steps first..last as the window.
struct Rig {
  StepTrace steps;
  FakeTimer timer;
  DeviceTrace dev{steps, [] { return std::int64_t{1'000'000}; }};
  Rig(std::int64_t first, std::int64_t last, std::size_t fail_record_after = SIZE_MAX) {
    timer.fail_record_after = fail_record_after;
    dev.install(&timer);
    steps.set_window(first, last);
  }
};

}  // namespace

TEST_CASE("a span's marks are placed on the host clock through the anchor") {
  // Anchor at host 1'000'000 us; a mark 2.5 ms before it starts 2500 us earlier.
  auto a = align_span(1'000'000, 2.5, 1.0);
  CHECK(a.ts_us == 997'500);
  CHECK(a.dur_us == 1'500);
  a = align_span(1'000'000, 0.0004, 0.0);  // below half a microsecond: rounds to none
  CHECK(a.ts_us == 1'000'000);
  CHECK(a.dur_us == 0);
  a = align_span(50, -0.002, -0.010);  // marks after the anchor
  CHECK(a.ts_us == 52);
  CHECK(a.dur_us == 8);
}

TEST_CASE("device spans become events on one track per stream aligned to the anchor") {
  StepTrace steps;
  FakeHost host{5'000'000'000, 0};
  DeviceTrace dev(steps, [&] { return host.read(); });
  FakeTimer timer;
  dev.install(&timer);
  steps.set_window(2, 2);

  steps.start_step(1);  // outside the window: nothing recorded, no mark made
  CHECK_FALSE(dev.on());
  CHECK(dev.begin("forward", 0, compute_stream()) == -1);
  dev.end_step();
  steps.end_step();
  CHECK(timer.records == 0);

  steps.start_step(2);
  REQUIRE(dev.on());
  timer.device_ms = 10.0;
  const int g = dev.begin("all_gather", 1, {"nccl", &nccl_stream_a});
  timer.device_ms = 10.4;
  dev.end(g);
  timer.device_ms = 11.0;
  const int f = dev.begin("forward", 1, compute_stream());
  timer.device_ms = 13.0;
  dev.end(f);
  const int r = dev.begin("all_reduce", -1, {"nccl", &nccl_stream_b});  // a second NCCL stream
  timer.device_ms = 13.25;
  dev.end(r);
  CHECK(timer.on_stream.at(0) == &nccl_stream_a);
  CHECK(timer.on_stream.at(2) == nullptr);  // the compute stream
  // The anchor: read between host 5'000'020'000 and 5'000'020'010, at device 20 ms.
  timer.device_ms = 20.0;
  host.us = 5'000'020'000;
  host.step_us = 10;
  dev.end_step();
  steps.end_step();

  CHECK(dev.tracks() == std::vector<std::string>{"cuda nccl", "cuda compute", "cuda nccl 2"});
  const auto ev = steps.events();
  REQUIRE(ev.size() == 3);
  const std::int64_t anchor = 5'000'020'005;
  CHECK(std::string(ev[0].name) == "all_gather");
  CHECK(ev[0].unit == 1);
  CHECK(ev[0].step == 2);
  CHECK(ev[0].tid == kFirstDeviceTrackTid);
  CHECK(ev[0].ts_us == anchor - 10'000);
  CHECK(ev[0].dur_us == 400);
  CHECK(std::string(ev[1].name) == "forward");
  CHECK(ev[1].tid == kFirstDeviceTrackTid + 1);
  CHECK(ev[1].ts_us == anchor - 9'000);
  CHECK(ev[1].dur_us == 2'000);
  CHECK(ev[2].tid == kFirstDeviceTrackTid + 2);
  CHECK(ev[2].unit == -1);
  CHECK(ev[2].dur_us == 250);

  // The tracks are named in the Chrome trace beside the host's threads.
  const auto j = nlohmann::json::parse(chrome_trace_json(0, "h", ev, dev.tracks()));
  std::map<int, std::string> names;
  for (const auto& e : j.at("traceEvents"))
    if (e.at("name") == "thread_name") names[e.at("tid")] = e.at("args").at("name");
  CHECK(names == std::map<int, std::string>{{0, "train"},
                                            {kFirstDeviceTrackTid, "cuda nccl"},
                                            {kFirstDeviceTrackTid + 1, "cuda compute"},
                                            {kFirstDeviceTrackTid + 2, "cuda nccl 2"}});
  CHECK(j.at("traceEvents").back().at("name") == "all_reduce");

  // A file for tests/gpu/trace_check.py's own test (WIREUP_DEVICE_TRACE_FIXTURE).
  if (const char* out = std::getenv("WIREUP_DEVICE_TRACE_FIXTURE")) {
    steps.set_window(3, 3);
    steps.start_step(3);
    // "step" on the host from 5'000'030'000 for 10 ms, a unit's forward and
    // backward on the device inside it.
    steps.add_event({"step", -1, 3, 0, 5'000'030'000, 10'000});
    timer.device_ms = 30.0;
    for (const char* name : {"forward", "backward"}) {
      const int s = dev.begin(name, 0, compute_stream());
      timer.device_ms += 2.0;
      dev.end(s);
    }
    timer.device_ms = 36.0;
    host.us = 5'000'036'000;
    dev.end_step();
    steps.end_step();
    std::ofstream(out) << chrome_trace_json(0, "h", steps.events(), dev.tracks());
  }
}

TEST_CASE("a span without an end adds no event; spans past the limit are counted") {
  Rig r(1, 1);
  auto& [steps, timer, dev] = r;
  steps.start_step(1);
  dev.begin("forward", 0, compute_stream());  // never ended
  for (std::size_t i = 0; i < DeviceTrace::kMaxSpansPerStep + 1; ++i) {
    const int s = dev.begin("backward", 0, compute_stream());
    dev.end(s);
  }
  dev.end_step();
  steps.end_step();
  CHECK(dev.dropped() == 2);
  const auto ev = steps.events();
  CHECK(ev.size() == DeviceTrace::kMaxSpansPerStep - 1);
  for (const auto& e : ev) CHECK(std::string(e.name) == "backward");
}

TEST_CASE("a failing timer turns the device spans off with one warning; host spans go on") {
  Rig r(1, 2, 3);  // the second span's end fails
  auto& [steps, timer, dev] = r;
  steps.start_step(1);
  dev.end(dev.begin("forward", 0, compute_stream()));
  CHECK(dev.warning().empty());
  const int s = dev.begin("backward", 0, compute_stream());
  CHECK(s >= 0);
  dev.end(s);
  CHECK_FALSE(dev.on());
  CHECK(dev.warning() ==
        "[profile] warning: the GPU's spans are off from here on: cudaEventRecord: fake "
        "failure; the trace keeps the host's spans");
  steps.add("optimizer", -1, 1, 1);
  dev.end_step();
  steps.end_step();
  steps.start_step(2);
  CHECK_FALSE(dev.on());
  CHECK(dev.begin("forward", 0, compute_stream()) == -1);
  dev.end_step();
  steps.end_step();
  CHECK(timer.records == 4);  // none after the failure
  const auto ev = steps.events();
  REQUIRE(ev.size() == 1);  // the host's span only: the step's device spans are dropped
  CHECK(std::string(ev[0].name) == "optimizer");
}

TEST_CASE("a timer that fails while the step is resolved adds no device event") {
  Rig r(1, 1, 2);  // the span's marks, then the drain mark fails
  auto& [steps, timer, dev] = r;
  steps.start_step(1);
  dev.end(dev.begin("forward", 0, compute_stream()));
  dev.end_step();
  steps.end_step();
  CHECK(steps.events().empty());
  CHECK_FALSE(dev.warning().empty());
}

TEST_CASE("without a timer (a CPU run) device spans are never on") {
  StepTrace& steps = step_trace();
  steps.set_window(1, 1);
  steps.start_step(1);
  CHECK(steps.on());
  CHECK_FALSE(device_trace().on());
  { const DeviceSpan span("forward", compute_stream()); }
  device_trace().end_step();
  steps.end_step();
  CHECK(device_trace().tracks().empty());
}

TEST_CASE("a span's number from an earlier step does not end a later step's span") {
  Rig r(1, 2);
  auto& [steps, timer, dev] = r;
  steps.start_step(1);
  const int old = dev.begin("reduce_scatter", 0, compute_stream());  // ends after its step
  dev.end_step();
  steps.end_step();
  steps.start_step(2);
  const int now = dev.begin("forward", 1, compute_stream());
  CHECK(now != old);
  dev.end(old);
  dev.end_step();
  steps.end_step();
  CHECK(steps.events().empty());  // neither span ended in its own step
}
