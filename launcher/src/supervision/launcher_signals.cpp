#include "supervision/launcher_signals.hpp"

#include <pthread.h>

namespace wireup {

sigset_t launcher_signal_set(const LaunchOptions& o) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int s : o.signals_to_handle) sigaddset(&set, s);
  return set;
}

sigset_t block_launcher_signals(const LaunchOptions& o) {
  const sigset_t set = launcher_signal_set(o);
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &set, &old);
  return old;
}

}  // namespace wireup
