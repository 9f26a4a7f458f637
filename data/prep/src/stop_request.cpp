#include "stop_request.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "wireup/error.hpp"
#include "wireup/prep/prep.hpp"

namespace wireup::prep {
namespace {

std::atomic<int> g_stop_signal{0};

// How long a stop request may take to unwind before the staging directory
// is removed and the process ends at once (e.g. inside tokenizer training,
// which cannot be interrupted).
constexpr auto kStopGrace = std::chrono::seconds(3);

}  // namespace

void request_stop(int signal) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal);
}

int stop_signal() { return g_stop_signal.load(); }

void check_stop() {
  if (g_stop_signal.load(std::memory_order_relaxed) != 0)
    throw InputError("interrupted; output removed");
}

StopWatchdog::StopWatchdog(Staging& staging) : thread_([this, &staging] { watch(staging); }) {}

StopWatchdog::~StopWatchdog() {
  {
    const std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void StopWatchdog::watch(Staging& staging) {
  std::unique_lock lock(mu_);
  // A signal handler can only set an atomic: poll it.
  while (!done_ && g_stop_signal.load() == 0) cv_.wait_for(lock, std::chrono::milliseconds(100));
  if (done_ || cv_.wait_for(lock, kStopGrace, [&] { return done_; })) return;
  if (!staging.abandon()) return;  // committed: the run completes
  static constexpr char kMsg[] = "wireup-prep: error: interrupted; output removed\n";
  [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  ::_exit(128 + g_stop_signal.load());
}

}  // namespace wireup::prep
