#pragma once
#include <atomic>
#include <string>

// SIGTERM (scancel, preemption) and SIGUSR1 without a signal handler.
//
// A handler runs on whatever stack the interrupted thread has, and oneDNN's
// JIT sgemm kernels (Debian's 2.6, fixed upstream in 2026: oneDNN #4845)
// point the stack pointer into the heap while they run: a signal landing there
// writes its frame over heap memory, and the process aborts later in free().
// So no thread ever takes these signals: they are blocked in every thread and
// one watcher thread collects them with sigwait.
namespace wireup::train {

// Blocks SIGTERM and SIGUSR1 in the calling thread; every thread made after
// inherits that. Call first thing in main, before any thread exists.
void block_stop_signals();

// Starts the watcher. Until graceful_stop() is called a signal ends the
// process as if it had no handler (killed by that signal); afterwards its
// number is stored in `flag` and training stops at the end of the step,
// unless wireup-launch said the stop ends a failed attempt (below): then the
// process ends as without graceful_stop(), after one line saying why.
void start_stop_watcher(std::atomic<int>& flag);

// The line in the file named by WIREUP_LAUNCH_STOP_REASON
// (wireup/stop_reason.hpp), or empty when the variable is unset or the file
// absent: the launcher stops the workers because something failed.
std::string launcher_stop_reason();
void graceful_stop();

}  // namespace wireup::train
