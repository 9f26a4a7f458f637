#pragma once
#include <signal.h>

#include "job_wiring.hpp"
#include "wireup/launch_options.hpp"

namespace wireup {

// Exec mode: this task runs PROGRAM as one rank. Alone (one task, or no PMIx)
// the launcher execs it. In a PMIx step of several tasks it forks it and stays
// as a small supervisor: rank 0's supervisor links to every other one before
// any program starts, and when one rank's program fails (non-zero exit or a
// signal) every other program is stopped (SIGTERM, SIGKILL after at most 2 s)
// and its task exits with the failing rank's code. `old_mask` is the signal
// mask to give the program. Returns the launcher's exit code; a supervisor
// whose program was killed by a signal dies of the same signal.
int run_exec_mode(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
                  const sigset_t& old_mask);

}  // namespace wireup
