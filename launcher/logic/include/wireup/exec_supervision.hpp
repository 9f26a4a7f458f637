#pragma once
// Exec mode's fail-fast rules: each task keeps a small supervisor beside the
// program it runs, and rank 0's supervisor tells every other one to stop when
// any rank fails (see docs/launcher-exec-mode.md, "Exec mode: fail fast").
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace wireup {

struct RankFailure {
  std::uint32_t rank = 0;
  int code = 1;  // the launcher's exit code for it: the exit code, or 128+signal
};

// Rank 0's view of the step: which ranks finished, and the first failure
// (the root cause every stopped rank exits with).
class ExecStepWatch {
 public:
  explicit ExecStepWatch(std::uint32_t tasks);
  void done(std::uint32_t rank);  // a rank outside the step is ignored
  // The first failure of the step; nullopt for every later one.
  std::optional<RankFailure> fail(std::uint32_t rank, int code);
  bool all_done() const { return done_count_ == done_.size(); }
  const std::optional<RankFailure>& root() const { return root_; }

 private:
  std::vector<bool> done_;
  std::size_t done_count_ = 0;
  std::optional<RankFailure> root_;
};

// Whether the supervisor passes a signal it received on to its program.
// Signals from the kernel (a terminal's ^C), from the task's parent (slurmstepd
// and orted signal the whole process group or step) or from the program itself
// reached the program already; any other sender (`kill PID`) signalled the
// supervisor alone, so the program gets it too.
bool forward_to_program(int si_code, pid_t sender, pid_t parent, pid_t program);

// The exit code for a PROGRAM that cannot be executed, as the shell reports
// it: 127 when it is not found (ENOENT), 126 when it is found but cannot run
// (not executable, a directory, a bad format).
int exec_failure_exit_code(int err);

}  // namespace wireup
