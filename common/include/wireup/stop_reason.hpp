#pragma once

// How wireup-launch tells its workers that a stop is the end of a failed
// attempt rather than a stop asked from outside (scancel, preemption).
//
// Every worker gets kStopReasonVar: the path of a file in its run directory,
// absent while the attempt runs. Before the launcher stops the workers on its
// own (a worker failed here or on another node, an agent was lost), it writes
// one line there, e.g. "rank 3 on ip-10-1-2-3 failed (SIGKILL)", then sends
// SIGTERM. A signal the launcher only forwards leaves the file absent.
//
// wireup-train reads it when a stop signal arrives: with the file present no
// checkpoint can complete (a rank is gone), so it ends at once instead of
// saving, and the launcher's restart or exit does not wait out its grace
// period on collectives that never finish.
namespace wireup {

inline constexpr const char* kStopReasonVar = "WIREUP_LAUNCH_STOP_REASON";

}  // namespace wireup
