#include "watchdog/stall_watch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "watchdog/flight_recorder.hpp"

namespace wireup::train {

std::string format_io_stall_line(const char* kind, int rank, const std::string& host,
                                 double waited_s, const std::string& what) {
  char waited[32];
  std::snprintf(waited, sizeof waited, "%.1f", waited_s);
  return std::string("wireup-train: ") + kind + " stalled: rank " + std::to_string(rank) +
         " (host " + host + ") waited " + waited + " s " + what;
}

void StallWatch::set_place(int rank, std::string host) {
  std::lock_guard<std::mutex> lock(m_);
  rank_ = rank;
  host_ = std::move(host);
}

std::uint64_t StallWatch::arm(const char* kind, std::chrono::milliseconds timeout, Describe what) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> lock(m_);
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  const std::uint64_t id = next_id_++;
  waits_.push_back({id, kind, now, now + timeout, std::move(what)});
  // The thread sleeps until an earlier deadline (often that of a wait
  // disarmed since) and finds this one when it wakes: woken only for an
  // earlier one, so a wait per step costs no wake-up.
  if (now + timeout < sleeps_until_) cv_.notify_one();
  return id;
}

void StallWatch::disarm(std::uint64_t id) {
  std::lock_guard<std::mutex> lock(m_);
  const auto it =
      std::find_if(waits_.begin(), waits_.end(), [id](const Wait& w) { return w.id == id; });
  if (it != waits_.end()) waits_.erase(it);  // the watch wakes at the old deadline, finds none
}

StallWatch::~StallWatch() {
  {
    std::lock_guard<std::mutex> lock(m_);
    stop_ = true;
    cv_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void StallWatch::run() {
  std::unique_lock<std::mutex> lock(m_);
  while (!stop_) {
    if (waits_.empty()) {
      sleeps_until_ = std::chrono::steady_clock::time_point::max();
      cv_.wait(lock);
      continue;
    }
    const auto first =
        std::min_element(waits_.begin(), waits_.end(),
                         [](const Wait& a, const Wait& b) { return a.deadline < b.deadline; });
    if (std::chrono::steady_clock::now() >= first->deadline) end(*first);
    sleeps_until_ = first->deadline;
    cv_.wait_until(lock, sleeps_until_);
  }
}

// Prints the line and ends the process at once, as a stalled collective
// does: the thread that waits may never return.
void StallWatch::end(const Wait& w) {
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w.start).count();
  const auto line = format_io_stall_line(w.kind, rank_, host_, waited, w.what());
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(kExitPeerStalled);
}

StallWatch& stall_watch() {
  static StallWatch* w = new StallWatch;  // never destroyed: threads may arm until _exit
  return *w;
}

}  // namespace wireup::train
