#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "profile/step_trace.hpp"

// The device's side of a --profile_steps window: on a GPU, host clocks time
// kernel launches, not the work. A span of device work is a pair of marks
// recorded in a stream's order (CUDA events: cuda_timer.hpp) around the work
// the stream does (a unit's forward or backward on the compute stream, a
// collective on the NCCL stream). Once per step, after the step's work (never
// inside it), the marks are waited for, one more mark is recorded on the idle
// compute stream between two host clock readings (the anchor), and each span's
// distance to the anchor places it on the host clock: one trace event per span
// on the track of its stream ("cuda compute", "cuda nccl"). Outside the window a
// span costs one relaxed load, as a host span does, and no mark is made. Plain
// C++: the device is reached through the DeviceTimer seam.
namespace wireup::train {

// A stream the device works on, as the trace knows it: `kind` names its track
// ("compute": "cuda compute"; a second stream of a kind: "cuda nccl 2");
// `handle` is the adapter's stream.
struct DeviceStream {
  const char* kind = "compute";  // a string literal
  void* handle = nullptr;
};

// The compute stream: the default (null) stream, which LibTorch's kernels run
// on and comm_nccl.cpp's collectives wait for and are waited for on.
inline DeviceStream compute_stream() { return {"compute", nullptr}; }

// The seam: marks recorded in a stream's order and the time between two.
// Marks are numbered by the caller, 0.. within a step; an adapter makes what
// a number needs on its first use and reuses it in later steps. Each call
// returns false when the device failed; error() then says what failed.
class DeviceTimer {
 public:
  virtual ~DeviceTimer() = default;
  // Records mark `i` on `stream` now, in that stream's order.
  virtual bool record(std::size_t i, void* stream) = 0;
  // Blocks until mark `i` has completed.
  virtual bool wait(std::size_t i) = 0;
  // Milliseconds from completed mark `from` to completed mark `to`
  // (negative when `to` came first).
  virtual bool elapsed_ms(std::size_t from, std::size_t to, double* ms) = 0;
  // The failed call and the device's words for it.
  virtual std::string error() const = 0;
};

// A span's place on the host clock from its marks' distances to the anchor
// (the anchor's host time; milliseconds from each mark to the anchor).
struct AlignedSpan {
  std::int64_t ts_us = 0, dur_us = 0;
};
AlignedSpan align_span(std::int64_t anchor_us, double begin_to_anchor_ms, double end_to_anchor_ms);

// The process's device recorder. Spans may begin and end on any thread (the
// backward's run on autograd's device thread); they take a mutex only while on.
class DeviceTrace {
 public:
  // host_us: the host clock the anchor is read on (StepTrace::now_us).
  explicit DeviceTrace(StepTrace& steps, std::function<std::int64_t()> host_us = StepTrace::now_us)
      : steps_(steps), host_us_(std::move(host_us)) {}
  // The timer (not owned; it outlives the trace's use), before the first
  // step; nullptr: none (CPU runs), and device spans are never on.
  void install(DeviceTimer* timer);
  bool on() const { return steps_.on() && enabled_.load(std::memory_order_relaxed); }
  // A span of work enqueued on `stream` from now; its number, -1: not recorded
  // (outside the window, without a timer, past the limit).
  int begin(const char* name, int unit, DeviceStream stream);
  // The span's end mark, on its stream, now; -1 is ignored.
  void end(int span);
  // After the step's work is enqueued, before StepTrace::end_step: waits for
  // the step's marks, anchors them, adds one event per span to the
  // StepTrace (tid: kFirstDeviceTrackTid + its track). Nothing without spans.
  void end_step();
  // The tracks' names, tid kFirstDeviceTrackTid + index, in order of first use.
  std::vector<std::string> tracks() const;
  // Spans past kMaxSpansPerStep in a step: counted, not kept.
  static constexpr std::size_t kMaxSpansPerStep = 4096;
  std::uint64_t dropped() const;
  // The one warning printed when the timer failed (device spans are off from
  // then on; training goes on); empty while none.
  std::string warning() const;

 private:
  struct Span {
    const char* name;
    int unit;
    int track;
    std::size_t begin_mark, end_mark;
    bool ended;
  };
  int track_of(DeviceStream s);        // m_ held
  void fail(const std::string& what);  // m_ held
  bool resolve(std::int64_t step);     // m_ held

  StepTrace& steps_;
  std::function<std::int64_t()> host_us_;
  DeviceTimer* timer_ = nullptr;
  std::atomic<bool> enabled_{false};
  mutable std::mutex m_;
  std::vector<Span> spans_;
  int first_span_ = 0;  // the number of spans_[0]: numbers are not reused across steps
  std::size_t marks_ = 0;
  struct Track {
    void* handle;
    const char* kind;
    std::string name;
  };
  std::vector<Track> tracks_;
  std::uint64_t dropped_ = 0;
  std::string warning_;
};

DeviceTrace& device_trace();  // over step_trace()

// A span of device work on `stream` from construction to end() (or
// destruction), when the device trace is on at construction; otherwise
// nothing but the check. The unit: UnitScope's.
class DeviceSpan {
 public:
  DeviceSpan(const char* name, DeviceStream stream)
      : span_(device_trace().on() ? device_trace().begin(name, UnitScope::current(), stream) : -1) {
  }
  ~DeviceSpan() { end(); }
  void end() {
    if (span_ >= 0) device_trace().end(span_);
    span_ = -1;
  }
  DeviceSpan(const DeviceSpan&) = delete;
  DeviceSpan& operator=(const DeviceSpan&) = delete;

 private:
  int span_;
};

}  // namespace wireup::train
