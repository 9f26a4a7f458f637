#include "watchdog/flight_recorder.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>

namespace wireup::train {
namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// JSON string contents for the recorder's own names and hosts.
std::string escaped(const std::string& s) {
  std::string out;
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string this_host() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "?";
  return buf;
}

std::uint64_t FlightRecorder::begin(const char* kind, const char* group, std::uint64_t bytes,
                                    int unit) {
  const std::int64_t t = now_us();
  std::lock_guard<std::mutex> lock(m_);
  const std::uint64_t seq = next_++;
  ring_[seq % kCapacity] = {seq, kind, group, unit, bytes, t, 0, CollectiveState::Started};
  return seq;
}

void FlightRecorder::end(std::uint64_t seq, CollectiveState state) {
  const std::int64_t t = now_us();
  std::lock_guard<std::mutex> lock(m_);
  auto& r = ring_[seq % kCapacity];
  if (r.seq != seq) return;  // overwritten by 64 later collectives
  r.end_us = t;
  r.state = state;
  if (state == CollectiveState::Completed && seq > last_completed_) last_completed_ = seq;
}

std::uint64_t FlightRecorder::last_completed() const {
  std::lock_guard<std::mutex> lock(m_);
  return last_completed_;
}

std::vector<CollectiveRecord> FlightRecorder::records() const {
  std::lock_guard<std::mutex> lock(m_);
  std::vector<CollectiveRecord> out;
  const std::uint64_t first = next_ > kCapacity ? next_ - kCapacity : 1;
  for (std::uint64_t s = first; s < next_; ++s) out.push_back(ring_[s % kCapacity]);
  return out;
}

FlightRecorder& flight_recorder() {
  static FlightRecorder r;
  return r;
}

const char* state_name(CollectiveState s) {
  switch (s) {
    case CollectiveState::Started:
      return "started";
    case CollectiveState::Completed:
      return "completed";
    case CollectiveState::TimedOut:
      return "timed_out";
    case CollectiveState::Failed:
      return "failed";
  }
  return "?";
}

std::string flight_record_json(int rank, const std::string& host,
                               const std::vector<CollectiveRecord>& records,
                               std::uint64_t last_completed) {
  std::string j = "{\"rank\":" + std::to_string(rank) + ",\"host\":\"" + escaped(host) +
                  "\",\"last_completed\":" + std::to_string(last_completed) + ",\"collectives\":[";
  for (std::size_t i = 0; i < records.size(); ++i) {
    const auto& r = records[i];
    if (i) j += ',';
    j += "{\"seq\":" + std::to_string(r.seq) + ",\"kind\":\"" + escaped(r.kind) +
         "\",\"group\":\"" + escaped(r.group) + "\",\"unit\":" + std::to_string(r.unit) +
         ",\"bytes\":" + std::to_string(r.bytes) + ",\"start_us\":" + std::to_string(r.start_us) +
         ",\"end_us\":" + std::to_string(r.end_us) + ",\"state\":\"" + state_name(r.state) + "\"}";
  }
  return j + "]}";
}

std::string format_stall_line(int rank, const std::string& my_where, const CollectiveRecord& c,
                              double waited_s, const std::vector<RankPlace>& missing) {
  char waited[32];
  std::snprintf(waited, sizeof waited, "%.1f", waited_s);
  std::string line = "wireup-train: peer stalled: rank " + std::to_string(rank) + " (" + my_where +
                     ") waited " + waited + " s in " + c.kind + " #" + std::to_string(c.seq) +
                     " (group " + c.group + ", " + std::to_string(c.bytes) +
                     " bytes); not arrived:";
  if (missing.empty()) line += " unknown";
  for (std::size_t i = 0; i < missing.size(); ++i)
    line += std::string(i ? ", " : " ") + "rank " + std::to_string(missing[i].rank) + " (" +
            missing[i].where + ")";
  return line;
}

}  // namespace wireup::train
