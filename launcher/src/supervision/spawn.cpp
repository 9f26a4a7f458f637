#include "supervision/spawn.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "supervision/worker_stream.hpp"
#include "wireup/exec_supervision.hpp"

extern char** environ;

namespace wireup {

namespace {

// argv and env as the NULL-terminated char* arrays execvpe takes; they point
// into `p`, which outlives them.
struct ExecArrays {
  std::vector<char*> argv, env;
  explicit ExecArrays(const Program& p) {
    for (auto& a : p.argv) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (auto& e : p.env) env.push_back(const_cast<char*>(e.c_str()));
    env.push_back(nullptr);
  }
};

// In the child, before exec: its fds and signal dispositions.
void set_up_child(const ChildSetup& s) {
  if (s.own_process_group) setpgid(0, 0);
  if (s.stdout_fd >= 0) dup2(s.stdout_fd, 1);
  if (s.stderr_fd >= 0) dup2(s.stderr_fd, 2);
  if (s.pass_fd >= 0) {
    if (dup2(s.pass_fd, 3) < 0) _exit(s.failure_code.value_or(127));
    fcntl(3, F_SETFD, 0);  // dup2 onto itself keeps FD_CLOEXEC
  }
  if (s.close_other_fds) close_range(s.pass_fd >= 0 ? 4 : 3, ~0U, 0);
  if (s.default_signals)
    for (int sig = 1; sig < NSIG; ++sig) signal(sig, SIG_DFL);
}

int exec_with(const ExecArrays& a, const Program& p, const sigset_t& mask,
              const std::string& what) {
  pthread_sigmask(SIG_SETMASK, &mask, nullptr);
  execvpe(a.argv[0], a.argv.data(), a.env.data());
  const int err = errno;
  write_fd(2,
           "wireup-launch: " + what + "cannot run " + p.argv[0] + ": " + std::strerror(err) + "\n");
  return exec_failure_exit_code(err);
}

}  // namespace

std::vector<std::string> current_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

sigset_t no_signals() {
  sigset_t none;
  sigemptyset(&none);
  return none;
}

int exec_program(const Program& p, const sigset_t& mask, const std::string& what) {
  return exec_with(ExecArrays(p), p, mask, what);
}

pid_t spawn_program(const Program& p, const ChildSetup& setup) {
  const ExecArrays arrays(p);  // built before fork: the child only execs
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137);  // the launcher died before prctl
    set_up_child(setup);
    const int code = exec_with(arrays, p, setup.mask, setup.what);
    _exit(setup.failure_code.value_or(code));
  }
  // Also here, so a signal right after fork reaches the group.
  if (setup.own_process_group) setpgid(pid, pid);
  return pid;
}

GraceTimer::GraceTimer() : fd_(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) {
  if (fd_ < 0) throw std::runtime_error(std::string("timerfd_create: ") + std::strerror(errno));
}

GraceTimer::~GraceTimer() { close(fd_); }

void GraceTimer::arm(double seconds) {
  itimerspec t{};
  t.it_value.tv_sec = static_cast<time_t>(seconds);
  t.it_value.tv_nsec = static_cast<long>((seconds - static_cast<double>(t.it_value.tv_sec)) * 1e9);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_nsec == 0) t.it_value.tv_nsec = 1;
  timerfd_settime(fd_, 0, &t, nullptr);
}

void GraceTimer::disarm() {
  const itimerspec off{};
  timerfd_settime(fd_, 0, &off, nullptr);
}

bool GraceTimer::fired() {
  std::uint64_t ticks = 0;
  return read(fd_, &ticks, sizeof ticks) > 0;
}

}  // namespace wireup
