#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

// --profile_steps A:B: each rank records the phases of steps A..B on its host
// clock (data wait, each unit's forward and backward, the collectives it
// waited in, the optimizer, checkpoint stalls), on a GPU also the device's
// side of them (device_trace.hpp), and writes them as a Chrome trace
// (trace-RANK.json, which Perfetto and chrome://tracing open). Outside the
// window a span costs one relaxed load of a bool. Plain C++.
namespace wireup::train {

// The FSDP unit the calling thread works on now (-1: none): set by the unit
// around its collectives and compute, read by the flight recorder and the trace.
class UnitScope {
 public:
  explicit UnitScope(int unit);
  ~UnitScope();
  UnitScope(const UnitScope&) = delete;
  UnitScope& operator=(const UnitScope&) = delete;
  static int current();

 private:
  int previous_;
};

// One complete event ("ph":"X") of a trace.
struct TraceEvent {
  const char* name = "";  // a string literal
  int unit = -1;          // the FSDP unit, -1: none
  std::int64_t step = 0;
  int tid = 0;             // this process's thread number, 0 first; or a device track's
                           // (kFirstDeviceTrackTid + its index)
  std::int64_t ts_us = 0;  // microseconds since the epoch (host clock, see now_us)
  std::int64_t dur_us = 0;
};

// The tid of a device's first track (device_trace.hpp): far above the
// host threads' numbers.
constexpr int kFirstDeviceTrackTid = 1000;

// The process's recorder. start_step/end_step are called by the training
// loop's thread; spans may end on any thread (they take a mutex only while on).
class StepTrace {
 public:
  // Steps first..last inclusive (the flag's A:B); last < first: none.
  void set_window(std::int64_t first, std::int64_t last) {
    first_ = first;
    last_ = last;
  }
  // Recording is on from start_step(s) with s in the window to end_step().
  void start_step(std::int64_t step);
  void end_step();
  bool on() const { return on_.load(std::memory_order_relaxed); }
  void add(const char* name, int unit, std::int64_t ts_us, std::int64_t dur_us);
  // An event as given (its step and tid too): a device span once resolved.
  void add_event(const TraceEvent& e);
  // The step started last.
  std::int64_t step() const { return step_; }
  std::vector<TraceEvent> events() const;
  // At most kMaxEvents are kept (48 MiB; a step of a 32-layer model makes
  // about 500): the spans past them are counted, not kept.
  static constexpr std::size_t kMaxEvents = std::size_t{1} << 20;
  std::uint64_t dropped() const;
  // Microseconds since the epoch, read from the monotonic clock against one
  // reading of the wall clock at start: spans nest, and ranks on hosts whose
  // clocks agree (NTP) line up.
  static std::int64_t now_us();

 private:
  std::int64_t first_ = 0, last_ = -1;
  std::atomic<bool> on_{false};
  std::int64_t step_ = 0;
  mutable std::mutex m_;
  std::vector<TraceEvent> events_;
  std::uint64_t dropped_ = 0;
};

StepTrace& step_trace();

// Records [construction, destruction) as one event when the trace is on at
// construction; otherwise nothing but the check. The unit: UnitScope's.
class TraceSpan {
 public:
  explicit TraceSpan(const char* name)
      : name_(name), on_(step_trace().on()), t0_(on_ ? StepTrace::now_us() : 0) {}
  ~TraceSpan() {
    if (on_) step_trace().add(name_, UnitScope::current(), t0_, StepTrace::now_us() - t0_);
  }
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;

 private:
  const char* name_;
  bool on_;
  std::int64_t t0_;
};

// The events as a Chrome trace: {"traceEvents":[...]} with a process name
// ("rank R (host H)") and thread names ("train" for thread 0, then "thread N";
// device_tracks[k] for tid kFirstDeviceTrackTid + k), then one "X" event per
// span: name ("forward unit 3" where a unit is set), ph, ts, dur
// (microseconds), pid (the rank), tid, args {step, unit}.
std::string chrome_trace_json(int rank, const std::string& host,
                              const std::vector<TraceEvent>& events,
                              const std::vector<std::string>& device_tracks = {});

// --profile_dir: made if missing and checked writable at start, before any
// step. Throws InputError naming the flag and the directory.
void check_trace_dir(const std::filesystem::path& dir);

// DIR/trace-RANK.json, written atomically (wireup_file_io); its path.
std::filesystem::path write_chrome_trace(const std::filesystem::path& dir, int rank,
                                         const std::string& host,
                                         const std::vector<TraceEvent>& events,
                                         const std::vector<std::string>& device_tracks = {});

}  // namespace wireup::train
