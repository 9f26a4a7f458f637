#include "agent.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>

#include "agent_store.hpp"
#include "control_link.hpp"
#include "net.hpp"
#include "preload.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_output.hpp"
#include "wireup/launch_report.hpp"
#include "wireup/rendezvous.hpp"

namespace wireup {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

void write_fd(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed console must not stop supervision
    done += static_cast<std::size_t>(n);
  }
}

void say(const std::string& line) { write_fd(2, "wireup-launch: " + line + "\n"); }

// One worker's output stream: where it goes and what is kept for the summary.
struct Stream {
  int pipe = -1;
  int file = -1;
  int console = -1;  // 1, 2, or -1 when not shown
  std::unique_ptr<LinePrefixer> prefix;
  LineTail tail{20};

  void pump(const char* data, std::size_t n) {
    const std::string_view bytes(data, n);
    tail.feed(bytes);
    if (file >= 0) write_fd(file, std::string(bytes));
    if (console >= 0) {
      if (prefix) write_fd(console, prefix->feed(bytes));
      else write_fd(console, std::string(bytes));
    }
  }
  // Reads what is there; false at EOF.
  bool read_some() {
    char buf[65536];
    const ssize_t n = read(pipe, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    pump(buf, static_cast<std::size_t>(n));
    return true;
  }
  void close_all() {
    if (pipe >= 0) {
      while (read_some()) {}  // what the worker wrote before exiting
      close(pipe);
      pipe = -1;
    }
    if (console >= 0 && prefix) write_fd(console, prefix->flush());
    if (file >= 0) close(file);
    file = -1;
  }
};

struct Worker {
  std::uint32_t local_rank = 0, rank = 0;
  pid_t pid = -1;
  bool running = false;
  WorkerExit exit;
  Stream out, err;
  std::string error_file, dir;
};

class Agent {
 public:
  Agent(const LaunchOptions& o, Wiring& w, const std::vector<std::string>& env)
      : o_(o), w_(w), base_env_(env), coordinator_(w.task_rank == 0 && o.max_restarts > 0) {}
  int run();

 private:
  enum class Phase { Running, Stopping, WaitingPeers, Finished };

  void setup_signals();
  void setup_run_dir();
  void start_attempt();
  void spawn_all();
  void spawn(Worker& wk);
  WorkerSpec job_spec() const;  // what every worker of this attempt shares
  void on_preload_readable();
  void fail_agent(const std::string& why);
  void reap();
  void on_worker_exit(Worker& wk);
  void on_all_exited();
  void begin_stop(int sig);
  void kill_all(int sig);
  void finish(int code);
  void abort_job_if_pending();
  FailureFacts failure_of(const Worker& wk) const;
  void handle_control(ControlLink& link, const ControlMessage& m);
  void coordinator_event(const std::string& verb, ControlLink* from);
  void broadcast(const std::string& verb, std::vector<std::uint32_t> args);
  bool every_peer(bool ControlLink::*flag) const;
  std::size_t running_count() const;

  const LaunchOptions& o_;
  Wiring& w_;
  const std::vector<std::string>& base_env_;
  const bool coordinator_;
  std::vector<Worker> workers_;
  std::uint32_t attempt_ = 0;
  Phase phase_ = Phase::Running;
  bool restarting_ = false;      // stopping to restart, not to exit
  int term_signal_ = 0;          // a forwarded signal: exit 128+sig
  int exit_code_ = 0;
  std::optional<FailureFacts> failure_;
  int sigfd_ = -1, timerfd_ = -1;
  fs::path run_dir_;
  bool temp_run_dir_ = false;
  std::unique_ptr<ControlLink> up_;                 // to agent 0
  std::vector<std::unique_ptr<ControlLink>> peers_; // agent 0's links
  bool self_done_ = false, self_stopped_ = false;
  bool stop_broadcast_ = false;
  double spawn_ms_ = 0;
  std::optional<Clock::time_point> abort_at_;  // PMIx_Abort the step then
  std::string abort_message_;
  Clock::time_point summary_at_;
  std::unique_ptr<AgentStore> store_;          // agent 0 with --agent-store
  std::unique_ptr<PreloadServer> preload_;     // --preload
  bool spawn_pending_ = false;                 // workers wait for the preload import
  Clock::time_point preload_start_;
  double preload_ms_ = 0;
};

sigset_t agent_signal_set(const LaunchOptions& o) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int s : o.signals_to_handle) sigaddset(&set, s);
  return set;
}

void Agent::setup_signals() {
  const sigset_t set = agent_signal_set(o_);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sigfd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  timerfd_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);
  // Orphans of our workers (dataloaders, shells) become ours, so they are reaped and killed.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void Agent::setup_run_dir() {
  if (!o_.log_dir.empty()) {
    run_dir_ = o_.log_dir;
  } else {
    const char* tmp = std::getenv("TMPDIR");
    run_dir_ = fs::path(tmp && *tmp ? tmp : "/tmp") /
               ("wireup-launch-" + std::to_string(getuid())) /
               (std::to_string(getpid()) + "-" + std::to_string(w_.task_rank));
    temp_run_dir_ = true;
  }
}

WorkerSpec Agent::job_spec() const {
  WorkerSpec spec;
  spec.world_size = w_.world_size;
  spec.local_world_size = w_.nproc;
  spec.group_rank = w_.group_rank;
  spec.group_world_size = w_.group_count;
  spec.role = o_.role;
  spec.master_addr = w_.master_addr;
  spec.master_port = w_.master_port;
  spec.restart_count = attempt_;
  spec.max_restarts = o_.max_restarts;
  spec.run_id = w_.run_id;
  spec.agent_store = w_.agent_store;
  return spec;
}

void Agent::spawn(Worker& wk) {
  WorkerSpec spec = job_spec();
  spec.rank = wk.rank;
  spec.local_rank = wk.local_rank;
  wk.dir = (run_dir_ / ("attempt_" + std::to_string(attempt_)) / std::to_string(wk.rank)).string();
  fs::create_directories(wk.dir);
  wk.error_file = wk.dir + "/error.json";
  fs::remove(wk.error_file);
  spec.error_file = wk.error_file;

  const std::vector<std::string> env = build_worker_env(spec, base_env_);
  const std::vector<std::string> argv = worker_argv(o_);
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  for (auto* s : {&wk.out, &wk.err}) {
    const bool is_out = s == &wk.out;
    const StreamRoute route = route_stream(o_, is_out ? kStdout : kStderr, wk.local_rank);
    s->pipe = is_out ? outp[0] : errp[0];
    fcntl(s->pipe, F_SETFL, O_NONBLOCK);
    s->console = route.console ? (is_out ? 1 : 2) : -1;
    // Line-buffered even without a prefix, so ranks never interleave mid-line.
    s->prefix = std::make_unique<LinePrefixer>(
        o_.prefix_lines ? "[rank" + std::to_string(wk.rank) + "]: " : std::string());
    s->file = route.file ? open((wk.dir + (is_out ? "/stdout.log" : "/stderr.log")).c_str(),
                                O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                         : -1;
    s->tail = LineTail(20);
  }

  if (preload_) {
    // Forked by the preload server; adopted by this agent (a child subreaper)
    // once the server's middle process exits, its group already set.
    std::vector<std::string> prog(o_.program.begin(), o_.program.end());
    if (o_.run_module) prog.insert(prog.begin(), "-m");
    pid_t pid = -1;
    try {
      pid = preload_->spawn(prog, env, outp[1], errp[1]);
    } catch (...) {
      close(outp[1]);
      close(errp[1]);
      throw;
    }
    close(outp[1]);
    close(errp[1]);
    wk.pid = pid;
    wk.running = true;
    return;
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // Child: own process group, dies with the agent, clean signal state.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(137);  // the agent died before prctl
    dup2(outp[1], 1);
    dup2(errp[1], 2);
    close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; ++s) signal(s, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(cargv[0], cargv.data(), cenv.data());
    const std::string msg = "wireup-launch: cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    write_fd(2, msg);
    _exit(127);
  }
  setpgid(pid, pid);  // also here, so a signal right after fork reaches the group
  close(outp[1]);
  close(errp[1]);
  wk.pid = pid;
  wk.running = true;
}

void Agent::start_attempt() {
  workers_.clear();
  workers_.resize(w_.nproc);
  failure_.reset();
  restarting_ = false;
  self_done_ = self_stopped_ = false;
  stop_broadcast_ = false;
  for (auto& p : peers_) p->done = p->stopped = false;
  phase_ = Phase::Running;
  for (std::uint32_t i = 0; i < w_.nproc; ++i) {
    workers_[i].local_rank = i;
    workers_[i].rank = w_.first_rank + i;
  }
  if (!o_.preload.empty()) {
    if (!preload_) {
      // One server for every attempt: it only ever forks, so it stays clean.
      preload_start_ = Clock::now();
      preload_ = std::make_unique<PreloadServer>(
          o_, PreloadServer::shared_env(build_worker_env(job_spec(), base_env_)));
    }
    if (!preload_->ready()) {
      spawn_pending_ = true;  // spawn_all() once it says READY
      return;
    }
  }
  spawn_all();
}

void Agent::spawn_all() {
  spawn_pending_ = false;
  const auto t0 = Clock::now();
  try {
    for (auto& wk : workers_) spawn(wk);
  } catch (const std::exception& e) {
    if (!preload_) throw;
    return fail_agent(std::string("--preload: ") + e.what());
  }
  spawn_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (o_.verbose || std::getenv("WIREUP_LAUNCH_TIMING"))
    say("timing agent " + std::to_string(w_.task_rank) + " attempt " + std::to_string(attempt_) +
        ": pmix_init_ms=" + std::to_string(w_.pmix_init_ms) + " fence_ms=" +
        std::to_string(w_.fence_ms) + " spawn_ms=" + std::to_string(spawn_ms_) +
        (preload_ ? " preload_ms=" + std::to_string(preload_ms_) : std::string()));
}

void Agent::on_preload_readable() {
  try {
    preload_->on_readable();
  } catch (const std::exception& e) {
    return fail_agent(std::string("--preload: ") + e.what() + " (its output is above)");
  }
  if (!preload_->ready()) return;
  preload_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - preload_start_).count();
  if (spawn_pending_) spawn_all();
}

// A failure of the agent's own machinery (not a worker's): no restart helps,
// so every node stops as for a worker failure without restarts left.
void Agent::fail_agent(const std::string& why) {
  say(why);
  spawn_pending_ = false;
  if (phase_ == Phase::Finished) return;
  exit_code_ = 1;
  restarting_ = false;
  summary_at_ = Clock::now();
  if (w_.pmix && w_.task_count > 1) {
    abort_at_ = summary_at_ + std::chrono::seconds(1);
    abort_message_ = "wireup-launch on " + w_.host + ": " + why;
  }
  if (phase_ == Phase::WaitingPeers) return finish(1);
  phase_ = Phase::Running;  // so begin_stop stops, whatever was under way
  begin_stop(SIGTERM);
}

std::size_t Agent::running_count() const {
  std::size_t n = 0;
  for (const auto& wk : workers_) n += wk.running;
  return n;
}

void Agent::kill_all(int sig) {
  // The whole group: a worker's own children go too, even after it exited.
  for (const auto& wk : workers_)
    if (wk.pid > 0) killpg(wk.pid, sig);
}

void Agent::begin_stop(int sig) {
  if (phase_ == Phase::Stopping || phase_ == Phase::Finished) {
    kill_all(sig);  // a second signal is forwarded too
    return;
  }
  phase_ = Phase::Stopping;
  spawn_pending_ = false;  // never spawned: nothing to stop
  kill_all(sig);
  itimerspec t{};
  const double g = o_.grace_period;
  t.it_value.tv_sec = static_cast<time_t>(g);
  t.it_value.tv_nsec = static_cast<long>((g - static_cast<double>(t.it_value.tv_sec)) * 1e9);
  if (t.it_value.tv_sec == 0 && t.it_value.tv_nsec == 0) t.it_value.tv_nsec = 1;
  timerfd_settime(timerfd_, 0, &t, nullptr);
  if (running_count() == 0) on_all_exited();
}

FailureFacts Agent::failure_of(const Worker& wk) const {
  FailureFacts f;
  f.rank = wk.rank;
  f.local_rank = wk.local_rank;
  f.node_rank = w_.group_rank;
  f.host = w_.host;
  f.attempt = attempt_;
  f.exit = wk.exit;
  std::ifstream in(wk.error_file);
  if (in) {
    std::stringstream ss;
    ss << in.rdbuf();
    f.error_file = parse_error_file(ss.str());
  }
  f.log_tail = wk.err.tail.lines();
  if (f.log_tail.empty()) f.log_tail = wk.out.tail.lines();
  if (!o_.log_dir.empty()) f.log_path = wk.dir + "/stderr.log";
  return f;
}

void Agent::on_worker_exit(Worker& wk) {
  wk.out.close_all();
  wk.err.close_all();
  const bool failed = wk.exit.signaled || wk.exit.code != 0;
  if (!failed || phase_ != Phase::Running) return;  // exits we caused are no root cause
  failure_ = failure_of(wk);
  const int code = launcher_exit_code(wk.exit);
  const bool can_restart = attempt_ < o_.max_restarts;
  if (can_restart) {
    say("rank " + std::to_string(wk.rank) + " on " + w_.host + " failed (" +
        (wk.exit.signaled ? signal_name(wk.exit.code) : "exit code " + std::to_string(wk.exit.code)) +
        "); restarting every worker (restart " + std::to_string(attempt_ + 1) + " of " +
        std::to_string(o_.max_restarts) + ")");
    restarting_ = true;
    begin_stop(SIGTERM);
    if (coordinator_) coordinator_event("FAIL", nullptr);
    else if (up_) up_->send("FAIL", {attempt_});
    return;
  }
  exit_code_ = code;
  write_fd(2, format_failure_summary(*failure_));
  // Every other node stops now, not when its collectives time out: as soon as
  // the local workers are gone (so the summary and their last output reach
  // srun before the step is torn down), and at most 1 s from now.
  summary_at_ = Clock::now();
  if (w_.pmix && w_.task_count > 1) {
    abort_at_ = summary_at_ + std::chrono::seconds(1);
    abort_message_ = "wireup-launch: rank " + std::to_string(failure_->rank) + " on " + w_.host +
                     " failed with exit code " + std::to_string(exit_code_);
  }
  begin_stop(SIGTERM);
}

void Agent::abort_job_if_pending() {
  if (!abort_at_) return;
  abort_at_.reset();
  w_.pmix->abort(exit_code_, abort_message_);
}

void Agent::reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    if (preload_ && pid == preload_->pid()) {
      preload_->reaped();
      const bool was_ready = preload_->ready();
      preload_.reset();  // a later attempt starts another
      if (!was_ready) {
        const WorkerExit e = decode_wait_status(status);
        fail_agent("--preload: the preload process " +
                   (e.signaled ? "was killed by " + signal_name(e.code)
                               : "exited with code " + std::to_string(e.code)) +
                   " before it was ready (its output is above)");
      }
      continue;
    }
    for (auto& wk : workers_) {
      if (wk.pid != pid || !wk.running) continue;
      wk.running = false;
      wk.exit = decode_wait_status(status);
      on_worker_exit(wk);
    }
    // Other pids: adopted orphans; reaped and forgotten.
  }
  if (phase_ != Phase::Finished && phase_ != Phase::WaitingPeers && running_count() == 0 &&
      !workers_.empty() && !spawn_pending_)
    on_all_exited();
}

void Agent::on_all_exited() {
  timerfd_settime(timerfd_, 0, std::make_unique<itimerspec>().get(), nullptr);
  kill_all(SIGKILL);  // stragglers left in the workers' groups
  // Local workers gone: abort now, but give srun's I/O a moment to carry the
  // summary (seen lost when the step was torn down right after the write).
  if (abort_at_) abort_at_ = std::min(*abort_at_, summary_at_ + std::chrono::milliseconds(300));
  if (term_signal_ != 0) return finish(128 + term_signal_);
  if (phase_ == Phase::Stopping && restarting_) {
    phase_ = Phase::WaitingPeers;
    if (coordinator_) coordinator_event("STOPPED", nullptr);
    else if (up_) up_->send("STOPPED", {attempt_});
    return;
  }
  if (phase_ == Phase::Stopping) return finish(exit_code_ != 0 ? exit_code_ : 1);
  // Every local worker succeeded.
  if (coordinator_) {
    phase_ = Phase::WaitingPeers;
    coordinator_event("DONE", nullptr);
  } else if (up_) {
    phase_ = Phase::WaitingPeers;
    up_->send("DONE", {attempt_});
  } else {
    finish(0);
  }
}

void Agent::finish(int code) {
  if (phase_ == Phase::Finished) return;
  phase_ = Phase::Finished;
  exit_code_ = code;
}

void Agent::broadcast(const std::string& verb, std::vector<std::uint32_t> args) {
  for (auto& p : peers_) p->send(verb, args);
}

bool Agent::every_peer(bool ControlLink::*flag) const {
  if (peers_.size() + 1 < w_.task_count) return false;  // someone has not said HELLO yet
  for (const auto& p : peers_)
    if (!((*p).*flag)) return false;
  return true;
}

// Agent 0's view: `from` is a peer's link, nullptr for itself.
void Agent::coordinator_event(const std::string& verb, ControlLink* from) {
  if (verb == "FAIL") {
    if (stop_broadcast_) return;
    stop_broadcast_ = true;
    broadcast("STOP", {attempt_});
    if (phase_ == Phase::Running || phase_ == Phase::WaitingPeers) {
      restarting_ = true;
      if (phase_ == Phase::WaitingPeers) {
        phase_ = Phase::Running;  // done before the failure: nothing to stop
        begin_stop(SIGTERM);
      } else {
        begin_stop(SIGTERM);
      }
    }
    return;
  }
  if (verb == "DONE") {
    (from ? from->done : self_done_) = true;
  } else if (verb == "STOPPED") {
    (from ? from->stopped : self_stopped_) = true;
  }
  if (self_done_ && !stop_broadcast_ && every_peer(&ControlLink::done)) {
    broadcast("EXIT", {0});
    finish(0);
  } else if (stop_broadcast_ && self_stopped_ && every_peer(&ControlLink::stopped)) {
    ++attempt_;
    // The agent store stays: torch keys each attempt apart (/worker/attempt_N).
    if (!w_.agent_store) w_.master_port = pick_free_port(w_.master_port + 1);
    broadcast("START", {attempt_, w_.master_port});
    start_attempt();
  }
}

void Agent::handle_control(ControlLink& link, const ControlMessage& m) {
  if (coordinator_) {
    if (m.verb == "HELLO" && !m.args.empty()) link.peer_rank = m.args[0];
    else if (!m.args.empty() && m.args[0] != attempt_) return;  // from an attempt already over
    else coordinator_event(m.verb, &link);
    return;
  }
  if (m.verb == "STOP" && !m.args.empty() && m.args[0] == attempt_) {
    restarting_ = true;
    if (phase_ == Phase::WaitingPeers) {  // our workers had all succeeded
      up_->send("STOPPED", {attempt_});
    } else {
      begin_stop(SIGTERM);
    }
  } else if (m.verb == "START" && m.args.size() == 2) {
    attempt_ = m.args[0];
    w_.master_port = m.args[1];
    start_attempt();
  } else if (m.verb == "EXIT" && !m.args.empty()) {
    finish(static_cast<int>(m.args[0]));
  }
}

int Agent::run() {
  setup_signals();
  setup_run_dir();
  if (w_.store_listen_fd >= 0) {
    store_ = std::make_unique<AgentStore>(w_.store_listen_fd);
    w_.store_listen_fd = -1;  // the store owns it
  }
  if (!coordinator_ && o_.max_restarts > 0 && !w_.control.empty()) {
    const auto [addr, port] = split_endpoint("agent 0's control address", w_.control);
    up_ = std::make_unique<ControlLink>(connect_tcp(addr, port, 30000));
    up_->send("HELLO", {w_.task_rank});
  }
  start_attempt();

  while (phase_ != Phase::Finished) {
    std::vector<pollfd> fds;
    std::vector<Stream*> streams;
    std::vector<ControlLink*> links;
    fds.push_back({sigfd_, POLLIN, 0});
    fds.push_back({timerfd_, POLLIN, 0});
    fds.push_back({w_.control_listen_fd, POLLIN, 0});
    for (auto& wk : workers_)
      for (auto* s : {&wk.out, &wk.err})
        if (s->pipe >= 0) {
          fds.push_back({s->pipe, POLLIN, 0});
          streams.push_back(s);
        }
    const std::size_t first_link = fds.size();
    if (up_) { fds.push_back({up_->fd(), POLLIN, 0}); links.push_back(up_.get()); }
    for (auto& p : peers_) { fds.push_back({p->fd(), POLLIN, 0}); links.push_back(p.get()); }
    const std::size_t preload_at = fds.size();
    PreloadServer* const importing = preload_ && preload_->importing() ? preload_.get() : nullptr;
    if (importing) fds.push_back({importing->fd(), POLLIN, 0});

    int timeout_ms = -1;
    if (abort_at_) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*abort_at_ - Clock::now());
      timeout_ms = static_cast<int>(std::max<long>(0, left.count()));
    }
    if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (std::size_t i = 0; i < streams.size(); ++i) {
      auto& pf = fds[3 + i];
      if (pf.revents & (POLLIN | POLLHUP | POLLERR))
        if (!streams[i]->read_some()) {
          // EOF before exit: the worker closed its stream; stop polling it.
          close(streams[i]->pipe);
          streams[i]->pipe = -1;
        }
    }
    if (fds[0].revents & POLLIN) {
      signalfd_siginfo si;
      while (read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        const int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGCHLD) continue;  // reaped below in any case
        if (term_signal_ == 0) {
          term_signal_ = sig;
          say("got " + signal_name(sig) + "; forwarding to " + std::to_string(running_count()) +
              " worker(s), SIGKILL after " + std::to_string(o_.grace_period) + " s");
        }
        if (phase_ == Phase::WaitingPeers && running_count() == 0) finish(128 + sig);
        else begin_stop(sig);
      }
    }
    if (fds[1].revents & POLLIN) {
      std::uint64_t ticks;
      if (read(timerfd_, &ticks, sizeof ticks) > 0 && running_count() > 0) {
        say("grace period over; killing " + std::to_string(running_count()) + " worker(s)");
        kill_all(SIGKILL);
      }
    }
    if (fds[2].revents & POLLIN) {
      const int fd = accept4(w_.control_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0) peers_.push_back(std::make_unique<ControlLink>(fd));
    }
    for (std::size_t i = 0; i < links.size() && phase_ != Phase::Finished; ++i) {
      if (!(fds[first_link + i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      std::vector<ControlMessage> msgs;
      const bool alive = links[i]->receive(msgs);
      for (const auto& m : msgs) handle_control(*links[i], m);
      if (!alive) {
        // An agent vanished mid-run: the step cannot go on in step.
        std::erase_if(peers_, [&](auto& p) { return p.get() == links[i]; });
        if (links[i] == up_.get()) up_.reset();
        if (phase_ != Phase::Finished) {
          say("lost contact with another agent; stopping");
          if (exit_code_ == 0) exit_code_ = 1;
          restarting_ = false;
          if (phase_ == Phase::WaitingPeers) finish(exit_code_);
          else begin_stop(SIGTERM);
        }
        break;  // links changed; poll again
      }
    }
    if (importing && importing == preload_.get() && phase_ != Phase::Finished &&
        (fds[preload_at].revents & (POLLIN | POLLHUP | POLLERR)))
      on_preload_readable();
    reap();
    if (abort_at_ && Clock::now() >= *abort_at_) abort_job_if_pending();
  }
  if (abort_at_) {
    std::this_thread::sleep_until(*abort_at_);
    abort_job_if_pending();
  }
  kill_all(SIGKILL);
  preload_.reset();
  store_.reset();
  if (temp_run_dir_) {
    std::error_code ec;
    fs::remove_all(run_dir_, ec);
  }
  return exit_code_;
}

}  // namespace

void block_agent_signals(const LaunchOptions& o) {
  const sigset_t set = agent_signal_set(o);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int run_agent(const LaunchOptions& o, Wiring& w, const std::vector<std::string>& base_env) {
  Agent a(o, w, base_env);
  return a.run();
}

}  // namespace wireup
