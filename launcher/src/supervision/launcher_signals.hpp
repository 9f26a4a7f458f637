#pragma once
#include <signal.h>

#include "wireup/launch_options.hpp"

namespace wireup {

// SIGCHLD and the signals the launcher handles (--signals-to-handle).
sigset_t launcher_signal_set(const LaunchOptions& o);

// Blocks launcher_signal_set(o) and returns the mask before. Call before
// PMIx_Init: threads started later (PMIx's progress thread) inherit the mask,
// so every signal reaches the launcher's signalfd instead of killing the
// process or vanishing. A program the launcher execs gets the old mask back.
sigset_t block_launcher_signals(const LaunchOptions& o);

}  // namespace wireup
