#pragma once
#include <condition_variable>
#include <mutex>
#include <thread>

#include "staging.hpp"

// Internal to wireup-prep: how a SIGINT/SIGTERM (request_stop in prep.hpp)
// ends a run.
namespace wireup::prep {

// InputError "interrupted; output removed" once a stop was requested: called
// between documents and pieces, so a run unwinds within seconds.
void check_stop();

// Watches for a stop request while a run holds `staging`: once one has
// waited a grace period (3 s) without the run ending, removes the staging
// directory (unless the data set was already committed) and exits
// 128 + signal. For work that cannot be interrupted (tokenizer training).
class StopWatchdog {
 public:
  explicit StopWatchdog(Staging& staging);
  ~StopWatchdog();
  StopWatchdog(const StopWatchdog&) = delete;
  StopWatchdog& operator=(const StopWatchdog&) = delete;

 private:
  void watch(Staging& staging);

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace wireup::prep
