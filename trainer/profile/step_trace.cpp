#include "profile/step_trace.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::train {
namespace {

thread_local int t_unit = -1;
std::atomic<int> g_threads{0};
thread_local int t_tid = -1;

int thread_number() {
  if (t_tid < 0) t_tid = g_threads.fetch_add(1);
  return t_tid;
}

// A JSON string, quoted and escaped (bytes that are not UTF-8 replaced).
std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

UnitScope::UnitScope(int unit) : previous_(t_unit) { t_unit = unit; }
UnitScope::~UnitScope() { t_unit = previous_; }
int UnitScope::current() { return t_unit; }

std::int64_t StepTrace::now_us() {
  using namespace std::chrono;
  static const std::int64_t wall0 =
      duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
  static const steady_clock::time_point mono0 = steady_clock::now();
  return wall0 + duration_cast<microseconds>(steady_clock::now() - mono0).count();
}

void StepTrace::start_step(std::int64_t step) {
  thread_number();  // the training loop's thread is thread 0
  now_us();         // the clock's reference, before the first span
  step_ = step;
  on_.store(step >= first_ && step <= last_, std::memory_order_relaxed);
}

void StepTrace::end_step() { on_.store(false, std::memory_order_relaxed); }

void StepTrace::add(const char* name, int unit, std::int64_t ts_us, std::int64_t dur_us) {
  add_event({name, unit, step_, thread_number(), ts_us, dur_us});
}

void StepTrace::add_event(const TraceEvent& e) {
  std::lock_guard<std::mutex> lock(m_);
  if (events_.size() >= kMaxEvents) {
    ++dropped_;
    return;
  }
  events_.push_back(e);
}

std::uint64_t StepTrace::dropped() const {
  std::lock_guard<std::mutex> lock(m_);
  return dropped_;
}

std::vector<TraceEvent> StepTrace::events() const {
  std::lock_guard<std::mutex> lock(m_);
  return events_;
}

StepTrace& step_trace() {
  static StepTrace t;
  return t;
}

std::string chrome_trace_json(int rank, const std::string& host,
                              const std::vector<TraceEvent>& events,
                              const std::vector<std::string>& device_tracks) {
  const std::string pid = std::to_string(rank);
  std::string out = "{\"traceEvents\":[\n";
  out += "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":" + pid +
         ",\"tid\":0,\"args\":{\"name\":" + json_string("rank " + pid + " (host " + host + ")") +
         "}}";
  int threads = 1;
  for (const auto& e : events)
    if (e.tid < kFirstDeviceTrackTid) threads = std::max(threads, e.tid + 1);
  auto thread_name = [&](int tid, const std::string& name) {
    out += ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":" + pid +
           ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":" + json_string(name) + "}}";
  };
  for (int t = 0; t < threads; ++t)
    thread_name(t, t == 0 ? std::string("train") : "thread " + std::to_string(t));
  for (std::size_t k = 0; k < device_tracks.size(); ++k)
    thread_name(kFirstDeviceTrackTid + static_cast<int>(k), device_tracks[k]);
  for (const auto& e : events) {
    std::string name = e.name;
    if (e.unit >= 0) name += " unit " + std::to_string(e.unit);
    out += ",\n{\"name\":" + json_string(name) + ",\"ph\":\"X\",\"ts\":" + std::to_string(e.ts_us) +
           ",\"dur\":" + std::to_string(e.dur_us) + ",\"pid\":" + pid +
           ",\"tid\":" + std::to_string(e.tid) + ",\"args\":{\"step\":" + std::to_string(e.step) +
           ",\"unit\":" + std::to_string(e.unit) + "}}";
  }
  out += "\n],\"displayTimeUnit\":\"ms\"}\n";
  return out;
}

void check_trace_dir(const std::filesystem::path& dir) {
  try {
    std::filesystem::create_directories(dir);
    const auto probe = dir / (".wireup-trace-probe." + std::to_string(::getpid()));
    io::open_file(probe, O_WRONLY | O_CREAT | O_TRUNC);  // closed at once
    std::error_code ignored;
    std::filesystem::remove(probe, ignored);
  } catch (const std::exception& e) {
    throw InputError("--profile_dir " + dir.string() + ": cannot write a trace there (" + e.what() +
                     ")");
  }
}

std::filesystem::path write_chrome_trace(const std::filesystem::path& dir, int rank,
                                         const std::string& host,
                                         const std::vector<TraceEvent>& events,
                                         const std::vector<std::string>& device_tracks) {
  const auto path = dir / ("trace-" + std::to_string(rank) + ".json");
  io::write_atomically(path, chrome_trace_json(rank, host, events, device_tracks));
  return path;
}

}  // namespace wireup::train
