#include "exec_mode.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>

#include "net.hpp"
#include "pmix/pmix_handoff.hpp"
#include "supervision/control_link.hpp"
#include "supervision/fd_dispatch.hpp"
#include "supervision/launcher_signals.hpp"
#include "supervision/process_tree.hpp"
#include "supervision/spawn.hpp"
#include "supervision/worker_stream.hpp"
#include "wireup/exec_supervision.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_report.hpp"
#include "wireup/rendezvous.hpp"

namespace wireup {

namespace {

constexpr double kStopGraceCapS = 2.0;  // a stopped rank's program gets SIGKILL by then
constexpr int kLinkTimeoutMs = 60000;   // every launcher links to rank 0's within this

Program program_of(const LaunchOptions& o, const JobLayout& job) {
  WorkerSpec spec = job_worker_spec(o, job);
  spec.rank = job.first_rank;
  spec.local_rank = job.local_rank;
  spec.local_world_size = job.local_size;
  spec.keep_task_identity = true;
  if (!o.log_dir.empty()) {
    // No supervisor reads it, but the file is kept where the user looks.
    const auto dir = std::filesystem::path(o.log_dir) / "attempt_0" / std::to_string(spec.rank);
    std::filesystem::create_directories(dir);
    spec.error_file = (dir / "error.json").string();
  }
  return {worker_argv(o), build_worker_env(spec, current_env())};
}

class ExecSupervisor {
 public:
  ExecSupervisor(const LaunchOptions& o, const JobLayout& job, JobConnections& conn)
      : o_(o), job_(job), conn_(conn), hub_(job.task_rank == 0), watch_(job.task_count) {}

  // Before PMIx_Finalize: rank 0 accepts every other launcher, the others
  // connect to it. Throws std::runtime_error.
  void link();
  // After the fork: supervises `child` until the step ends for this task.
  int run(pid_t child);

 private:
  void on_signals();
  void on_link_readable(ControlLink& link, FdDispatch& d);
  void on_child_exit(int status);
  void on_message(ControlLink& from, const ControlMessage& m);
  void on_link_lost(ControlLink& link);
  void peer_failed(std::uint32_t rank, int code);
  void stop_program(const RankFailure& root);
  void finish(int code, int signal = 0);

  const LaunchOptions& o_;
  const JobLayout& job_;
  JobConnections& conn_;
  const bool hub_;
  ExecStepWatch watch_;
  std::unique_ptr<ControlLink> up_;                  // to rank 0's supervisor
  std::vector<std::unique_ptr<ControlLink>> peers_;  // rank 0's links
  const pid_t parent_ = getppid();                   // the task's parent: slurmstepd or orted
  int sigfd_ = -1;
  pid_t child_ = -1;
  bool child_running_ = false;
  std::optional<RankFailure> stopping_;  // stopping for this failure
  GraceTimer grace_;                     // SIGKILL once the grace period after SIGTERM is over
  bool finished_ = false;
  int exit_code_ = 0, raise_signal_ = 0;
};

void ExecSupervisor::link() {
  if (!hub_) {
    const auto [addr, port] = split_endpoint("rank 0's control address", job_.control);
    up_ = std::make_unique<ControlLink>(connect_tcp(addr, port, kLinkTimeoutMs));
    if (!up_->send(ControlVerb::Hello, {job_.task_rank}))
      throw std::runtime_error("rank 0's launcher at " + job_.control + " closed the connection");
    return;
  }
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kLinkTimeoutMs);
  while (peers_.size() + 1 < job_.task_count) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd pf{conn_.control_listen_fd, POLLIN, 0};
    const int n = left.count() > 0 ? poll(&pf, 1, static_cast<int>(left.count())) : 0;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(
          "only " + std::to_string(peers_.size()) + " of " + std::to_string(job_.task_count - 1) +
          " launchers linked to rank 0's within " + std::to_string(kLinkTimeoutMs / 1000) + " s");
    const int fd = accept4(conn_.control_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) peers_.push_back(std::make_unique<ControlLink>(fd));
  }
  conn_.close_control_listener();
}

void ExecSupervisor::finish(int code, int signal) {
  finished_ = true;
  exit_code_ = code;
  raise_signal_ = signal;
}

void ExecSupervisor::stop_program(const RankFailure& root) {
  stopping_ = root;
  if (!child_running_) return finish(root.code);
  if (o_.verbose)
    say("rank " + std::to_string(job_.task_rank) + ": stopping, rank " + std::to_string(root.rank) +
        " failed (exit code " + std::to_string(root.code) + ")");
  kill(child_, SIGTERM);
  kill(child_, SIGCONT);  // a stopped program takes the SIGTERM only once it runs again
  grace_.arm(std::min(o_.grace_period, kStopGraceCapS));
}

// Rank 0: a rank failed (or its launcher vanished); the first one is the root cause.
void ExecSupervisor::peer_failed(std::uint32_t rank, int code) {
  const auto root = watch_.fail(rank, code);
  if (!root) return;
  for (auto& p : peers_)
    if (!p->done) p->send(ControlVerb::Stop, {root->rank, static_cast<std::uint32_t>(root->code)});
  stop_program(*root);
}

void ExecSupervisor::on_child_exit(int status) {
  child_running_ = false;
  const WorkerExit e = decode_wait_status(status);
  if (stopping_) return finish(stopping_->code);
  const int signal = e.signaled ? e.code : 0;
  if (!e.signaled && e.code == 0) {
    if (!hub_) {
      up_->send(ControlVerb::Done, {job_.task_rank});
      return finish(0);
    }
    watch_.done(0);
    if (watch_.all_done()) finish(0);
    return;
  }
  const int code = launcher_exit_code(e);
  say("rank " + std::to_string(job_.task_rank) + " on " + job_.host + " failed (" +
      describe_exit(e) + "); stopping every rank");
  if (hub_) {
    peer_failed(0, code);
  } else {
    up_->send(ControlVerb::Fail, {job_.task_rank, static_cast<std::uint32_t>(code)});
  }
  finish(code, signal);
}

void ExecSupervisor::on_message(ControlLink& from, const ControlMessage& m) {
  if (hub_) {
    const std::uint32_t rank = m.args.empty() ? 0 : m.args[0];
    if (m.verb == ControlVerb::Hello && !m.args.empty()) {
      from.peer_rank = rank;
    } else if (m.verb == ControlVerb::Done) {
      from.done = true;
      watch_.done(rank);
      if (watch_.all_done() && !child_running_) finish(0);
    } else if (m.verb == ControlVerb::Fail && m.args.size() == 2) {
      from.done = true;  // it leaves now
      peer_failed(rank, static_cast<int>(m.args[1]));
    }
    return;
  }
  if (m.verb == ControlVerb::Stop && m.args.size() == 2 && !stopping_)
    stop_program({m.args[0], static_cast<int>(m.args[1])});
}

// Signals for the program, and its exit (SIGCHLD).
void ExecSupervisor::on_signals() {
  signalfd_siginfo si;
  while (read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD || !child_running_) continue;
    if (forward_to_program(si.ssi_code, static_cast<pid_t>(si.ssi_pid), parent_, child_))
      kill(child_, sig);
  }
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
    if (pid == child_ && child_running_) on_child_exit(status);  // others: orphans
}

void ExecSupervisor::on_link_readable(ControlLink& link, FdDispatch& d) {
  if (finished_) return;
  std::vector<ControlMessage> msgs;
  const bool alive = link.receive(msgs);
  for (const auto& m : msgs) on_message(link, m);
  if (alive) return;
  d.end_round();  // the links change
  on_link_lost(link);
  if (&link == up_.get()) up_.reset();
  std::erase_if(peers_, [&](auto& p) { return p.get() == &link; });
}

void ExecSupervisor::on_link_lost(ControlLink& link) {
  if (hub_) {
    if (link.done) return;
    const std::string who =
        link.peer_rank ? "rank " + std::to_string(*link.peer_rank) + "'s" : "another rank's";
    say("lost " + who + " launcher; stopping every rank");
    peer_failed(link.peer_rank.value_or(0), 1);
    return;
  }
  if (stopping_ || finished_) return;
  say("rank " + std::to_string(job_.task_rank) + ": lost contact with rank 0's launcher; stopping");
  stop_program({0, 1});
}

int ExecSupervisor::run(pid_t child) {
  child_ = child;
  child_running_ = true;
  const sigset_t set = launcher_signal_set(o_);
  sigfd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  while (!finished_) {
    FdDispatch d;
    d.watch(sigfd_, [this] { on_signals(); });
    d.watch(grace_.fd(), [this] {
      if (grace_.fired() && child_running_) kill(child_, SIGKILL);
    });
    if (up_) d.watch(up_->fd(), [this, &d, l = up_.get()] { on_link_readable(*l, d); });
    for (auto& p : peers_) d.watch(p->fd(), [this, &d, l = p.get()] { on_link_readable(*l, d); });
    d.dispatch(-1);
  }
  // Left by the program (a daemon, a shell's children): they end with this task.
  kill_descendants();
  up_.reset();
  peers_.clear();
  if (raise_signal_ != 0) {
    // Die as the program died, so srun/mpirun report its signal.
    const rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(raise_signal_, SIG_DFL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, raise_signal_);
    pthread_sigmask(SIG_UNBLOCK, &only, nullptr);
    raise(raise_signal_);
  }
  return exit_code_;
}

}  // namespace

int run_exec_mode(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
                  const sigset_t& old_mask) {
  const Program prog = program_of(o, job);
  if (o.verbose || std::getenv("WIREUP_LAUNCH_TIMING"))
    say("timing rank " + std::to_string(job.first_rank) +
        ": pmix_init_ms=" + std::to_string(job.pmix_init_ms) +
        " fence_ms=" + std::to_string(job.fence_ms) + " spawn_ms=0");
  const bool supervised = conn.pmix && job.task_count > 1 && !job.control.empty();
  ExecSupervisor sup(o, job, conn);
  if (supervised) {
    try {
      sup.link();
    } catch (const std::exception& e) {
      const std::string why = std::string("exec mode: ") + e.what();
      say(why);
      conn.pmix->abort(1, "wireup-launch: " + why);
      return 1;
    }
  }
  // A PMIx client must finalize before exec, or mpirun fails the job; the
  // connection itself stays open until the task exits (pmix_handoff.hpp).
  if (conn.pmix && !finalize_keeping_connection(*conn.pmix) && o.verbose)
    say("no TCP PMIx server URI; the finalized connection closes now");
  if (!supervised) return exec_program(prog, old_mask);

  prctl(PR_SET_CHILD_SUBREAPER, 1);
  // The program: in the task's process group (signals to the task reach it
  // as before), killed with its supervisor.
  ChildSetup setup;
  setup.mask = old_mask;
  const pid_t pid = spawn_program(prog, setup);
  return sup.run(pid);
}

}  // namespace wireup
