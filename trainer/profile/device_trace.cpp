#include "profile/device_trace.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace wireup::train {

AlignedSpan align_span(std::int64_t anchor_us, double begin_to_anchor_ms, double end_to_anchor_ms) {
  const auto at = [&](double to_anchor_ms) {
    return anchor_us - std::llround(to_anchor_ms * 1000.0);
  };
  const std::int64_t ts = at(begin_to_anchor_ms);
  return {ts, at(end_to_anchor_ms) - ts};
}

void DeviceTrace::install(DeviceTimer* timer) {
  std::lock_guard<std::mutex> lock(m_);
  timer_ = timer;
  enabled_.store(timer != nullptr, std::memory_order_relaxed);
}

int DeviceTrace::track_of(DeviceStream s) {
  int same_kind = 0;
  for (std::size_t k = 0; k < tracks_.size(); ++k) {
    if (tracks_[k].handle == s.handle) return static_cast<int>(k);
    if (std::strcmp(tracks_[k].kind, s.kind) == 0) ++same_kind;
  }
  std::string name = std::string("cuda ") + s.kind;
  if (same_kind > 0) name += " " + std::to_string(same_kind + 1);
  tracks_.push_back({s.handle, s.kind, std::move(name)});
  return static_cast<int>(tracks_.size() - 1);
}

void DeviceTrace::fail(const std::string& what) {
  enabled_.store(false, std::memory_order_relaxed);
  timer_ = nullptr;
  spans_.clear();
  marks_ = 0;
  warning_ = "[profile] warning: the GPU's spans are off from here on: " + what +
             "; the trace keeps the host's spans";
  std::fprintf(stderr, "%s\n", warning_.c_str());
  std::fflush(stderr);
}

int DeviceTrace::begin(const char* name, int unit, DeviceStream stream) {
  std::lock_guard<std::mutex> lock(m_);
  if (!timer_ || !steps_.on()) return -1;
  if (spans_.size() >= kMaxSpansPerStep) {
    ++dropped_;
    return -1;
  }
  const int track = track_of(stream);
  const std::size_t mark = marks_;
  if (!timer_->record(mark, stream.handle)) {
    fail(timer_->error());
    return -1;
  }
  marks_ += 2;  // its end's number is kept for it
  spans_.push_back({name, unit, track, mark, mark + 1, false});
  return first_span_ + static_cast<int>(spans_.size() - 1);
}

void DeviceTrace::end(int span) {
  std::lock_guard<std::mutex> lock(m_);
  // A span of an earlier step (ended on another thread after it) is not this step's.
  if (!timer_ || span < first_span_ || span - first_span_ >= static_cast<int>(spans_.size()))
    return;
  Span& s = spans_[span - first_span_];
  if (s.ended) return;
  if (!timer_->record(s.end_mark, tracks_[s.track].handle)) {
    fail(timer_->error());
    return;
  }
  s.ended = true;
}

// The step's marks waited for (a drain mark on the compute stream first, so
// that the stream is idle), then the anchor between two host readings.
bool DeviceTrace::resolve(std::int64_t step) {
  const std::size_t drain = marks_, anchor = marks_ + 1;
  if (!timer_->record(drain, compute_stream().handle)) return false;
  for (const auto& s : spans_)
    if (!timer_->wait(s.begin_mark) || (s.ended && !timer_->wait(s.end_mark))) return false;
  if (!timer_->wait(drain)) return false;
  const std::int64_t h0 = host_us_();
  if (!timer_->record(anchor, compute_stream().handle) || !timer_->wait(anchor)) return false;
  const std::int64_t h1 = host_us_();
  const std::int64_t anchor_us = h0 + (h1 - h0) / 2;
  std::vector<TraceEvent> out;
  for (const auto& s : spans_) {
    if (!s.ended) continue;  // its work was never enqueued
    double b = 0, e = 0;
    if (!timer_->elapsed_ms(s.begin_mark, anchor, &b) ||
        !timer_->elapsed_ms(s.end_mark, anchor, &e))
      return false;
    const AlignedSpan a = align_span(anchor_us, b, e);
    out.push_back({s.name, s.unit, step, kFirstDeviceTrackTid + s.track, a.ts_us, a.dur_us});
  }
  for (const auto& ev : out) steps_.add_event(ev);
  return true;
}

void DeviceTrace::end_step() {
  if (!steps_.on()) return;
  std::lock_guard<std::mutex> lock(m_);
  if (!timer_ || spans_.empty()) return;
  if (!resolve(steps_.step())) {
    fail(timer_->error());
    return;
  }
  first_span_ += static_cast<int>(spans_.size());
  spans_.clear();
  marks_ = 0;
}

std::vector<std::string> DeviceTrace::tracks() const {
  std::lock_guard<std::mutex> lock(m_);
  std::vector<std::string> names;
  for (const auto& t : tracks_) names.push_back(t.name);
  return names;
}

std::uint64_t DeviceTrace::dropped() const {
  std::lock_guard<std::mutex> lock(m_);
  return dropped_;
}

std::string DeviceTrace::warning() const {
  std::lock_guard<std::mutex> lock(m_);
  return warning_;
}

DeviceTrace& device_trace() {
  static DeviceTrace t(step_trace());
  return t;
}

}  // namespace wireup::train
