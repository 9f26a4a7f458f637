#include "runtime/stop_signals.hpp"

#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "wireup/stop_reason.hpp"

namespace wireup::train {
using wireup::kStopReasonVar;
namespace {

std::atomic<bool> g_graceful{false};

sigset_t stop_set() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGTERM);
  sigaddset(&s, SIGUSR1);
  return s;
}

// The default action, taken from this thread: the process ends killed by
// `sig`, which is what srun and wireup-launch report.
[[noreturn]] void die_by(int sig) {
  struct sigaction sa {};
  sa.sa_handler = SIG_DFL;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, sig);
  ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  ::raise(sig);
  std::_Exit(128 + sig);  // not reached
}

}  // namespace

std::string launcher_stop_reason() {
  const char* path = std::getenv(kStopReasonVar);
  if (path == nullptr || *path == '\0') return {};
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return {};
  char line[512] = {};
  const bool got = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  std::string why = got ? line : "";
  while (!why.empty() && (why.back() == '\n' || why.back() == '\r')) why.pop_back();
  return why.empty() ? "wireup-launch stops the workers after a failure" : why;
}

void block_stop_signals() {
  const sigset_t s = stop_set();
  const int rc = ::pthread_sigmask(SIG_BLOCK, &s, nullptr);
  if (rc != 0) throw std::runtime_error(std::string("pthread_sigmask: ") + std::strerror(rc));
}

void start_stop_watcher(std::atomic<int>& flag) {
  std::thread([&flag] {
    const sigset_t s = stop_set();
    for (;;) {
      int sig = 0;
      if (::sigwait(&s, &sig) != 0) continue;
      if (!g_graceful.load()) die_by(sig);
      if (const std::string why = launcher_stop_reason(); !why.empty()) {
        std::fprintf(stderr,
                     "wireup-train: %s; ending without a checkpoint (a rank is gone, so "
                     "none could complete; the newest saved one stands)\n",
                     why.c_str());
        die_by(sig);
      }
      flag.store(sig);
    }
  }).detach();
}

void graceful_stop() { g_graceful.store(true); }

}  // namespace wireup::train
