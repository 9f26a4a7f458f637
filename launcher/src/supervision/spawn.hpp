#pragma once
// Starting the programs the launcher supervises (workers, exec mode's
// program, the --preload server) and stopping them: one fork+exec and one
// SIGTERM-then-SIGKILL grace timer for the agent and exec mode alike.
#include <signal.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace wireup {

// This process's environment as KEY=VALUE strings.
std::vector<std::string> current_env();

// A program to run: argv[0] is looked up in PATH (execvpe).
struct Program {
  std::vector<std::string> argv, env;
};

// How a child is set up between fork and exec.
struct ChildSetup {
  bool own_process_group = false;      // a group of its own, signalled as one
  int stdout_fd = -1, stderr_fd = -1;  // moved onto 1 and 2 when set
  int pass_fd = -1;                    // moved onto 3, the one fd it inherits
  bool close_other_fds = false;        // fds from 3 (4 with pass_fd) are closed
  bool default_signals = false;        // every disposition back to SIG_DFL
  sigset_t mask{};                     // its signal mask
  std::string what = "";               // names it in "wireup-launch: WHAT cannot run ..."
  std::optional<int> failure_code;     // exit code when exec fails (else the shell's)
};

// Execs `p` with `mask` as its signal mask. Returns only on failure, with the
// exit code the shell gives (127 not found, 126 not runnable), once the
// reason is on stderr.
int exec_program(const Program& p, const sigset_t& mask, const std::string& what = "");

// Forks a child that dies with this process (PR_SET_PDEATHSIG), is set up as
// `setup` says and execs `p`. Returns its pid; throws std::runtime_error when
// fork fails.
pid_t spawn_program(const Program& p, const ChildSetup& setup);

// An empty signal mask, for a child that starts with a clean signal state.
sigset_t no_signals();

// The grace period between SIGTERM and SIGKILL, as a timerfd to poll.
class GraceTimer {
 public:
  GraceTimer();
  ~GraceTimer();
  GraceTimer(const GraceTimer&) = delete;
  GraceTimer& operator=(const GraceTimer&) = delete;

  int fd() const { return fd_; }
  void arm(double seconds);  // fires once, after `seconds` (at least 1 ns)
  void disarm();
  bool fired();  // on POLLIN: whether the period is over (reads the fd)

 private:
  int fd_;
};

}  // namespace wireup
