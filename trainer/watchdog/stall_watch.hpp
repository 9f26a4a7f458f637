#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// Deadlines for the waits that are not collectives: a batch from the data
// loader (a shard read stuck on the file system), a checkpoint file (a write
// stuck on it). One thread watches them; when one passes it prints one line
// naming the wait and what it was reading or writing, and ends the process
// with kExitPeerStalled, as a stalled collective does (docs/reliability.md).
// Plain C++.
namespace wireup::train {

// "wireup-train: data stalled: rank 1 (host a) waited 5.0 s for the batch of
// step 12; reading /d/train-00001.bin at byte 4096"
std::string format_io_stall_line(const char* kind, int rank, const std::string& host,
                                 double waited_s, const std::string& what);

class StallWatch {
 public:
  // What a wait is, asked only when its deadline passes (from the watch's
  // thread: it must not block, nor touch what the waiting thread changes).
  using Describe = std::function<std::string()>;
  // Where the line says it runs.
  void set_place(int rank, std::string host);
  // A wait of `kind` ("data", "checkpoint") begins; ends at disarm(id).
  std::uint64_t arm(const char* kind, std::chrono::milliseconds timeout, Describe what);
  void disarm(std::uint64_t id);
  ~StallWatch();

 private:
  struct Wait {
    std::uint64_t id;
    const char* kind;
    std::chrono::steady_clock::time_point start, deadline;
    Describe what;
  };
  void run();
  [[noreturn]] void end(const Wait& w);

  std::mutex m_;
  std::condition_variable cv_;
  std::vector<Wait> waits_;
  std::uint64_t next_id_ = 1;
  bool stop_ = false;
  // The deadline the thread sleeps until: max() while none is armed.
  std::chrono::steady_clock::time_point sleeps_until_ =
      std::chrono::steady_clock::time_point::max();
  int rank_ = 0;
  std::string host_ = "?";
  std::thread thread_;  // started by the first arm()
};

// The process's watch.
StallWatch& stall_watch();

// One armed wait for the scope's lifetime.
class StallDeadline {
 public:
  StallDeadline(const char* kind, std::chrono::milliseconds timeout, StallWatch::Describe what)
      : id_(stall_watch().arm(kind, timeout, std::move(what))) {}
  ~StallDeadline() { stall_watch().disarm(id_); }
  StallDeadline(const StallDeadline&) = delete;
  StallDeadline& operator=(const StallDeadline&) = delete;

 private:
  std::uint64_t id_;
};

}  // namespace wireup::train
