#include "agent/agent_workers.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include "agent/run_dir.hpp"
#include "wireup/exec_supervision.hpp"

namespace wireup {

namespace fs = std::filesystem;

void AgentWorkers::adopt_orphans() { prctl(PR_SET_CHILD_SUBREAPER, 1); }

void AgentWorkers::make_run_dir() {
  if (!o_.log_dir.empty()) {
    run_dir_ = o_.log_dir;
  } else {
    run_dir_ = make_private_run_dir();
    temp_run_dir_ = run_dir_;
  }
}

void AgentWorkers::remove_run_dir() {
  if (temp_run_dir_.empty()) return;
  std::error_code ec;
  fs::remove_all(temp_run_dir_, ec);
}

WorkerSpec AgentWorkers::job_spec() const {
  WorkerSpec spec = job_worker_spec(o_, job_);
  spec.master_port = master_port_;  // job_.master_port is only the first attempt's
  spec.local_world_size = job_.nproc;
  spec.restart_count = attempt_;
  spec.agent_store = job_.agent_store;
  return spec;
}

// Where one of a worker's streams goes: the console (prefixed), its log file, the tail.
void AgentWorkers::route_output(Worker& wk, Stream& s, int pipe_fd) const {
  const bool is_out = &s == &wk.out;
  const StreamRoute route = route_stream(o_, is_out ? kStdout : kStderr, wk.local_rank);
  s.pipe = pipe_fd;
  fcntl(s.pipe, F_SETFL, O_NONBLOCK);
  s.console = route.console ? (is_out ? 1 : 2) : -1;
  // Line-buffered even without a prefix, so ranks never interleave mid-line.
  s.prefix = std::make_unique<LinePrefixer>(
      o_.prefix_lines ? "[rank" + std::to_string(wk.rank) + "]: " : std::string());
  s.file = route.file ? open((wk.dir + (is_out ? "/stdout.log" : "/stderr.log")).c_str(),
                             O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)
                      : -1;
  s.tail = LineTail(20);
}

// Starts `prog` with its output on out_fd and err_fd: forked by the preload
// server (and adopted by this agent, a child subreaper, once the server's
// middle process exits, its group already set), or forked here in a process
// group of its own that dies with the agent, in a clean signal state.
pid_t AgentWorkers::start_program(const Program& prog, int out_fd, int err_fd) {
  if (preload_) {
    std::vector<std::string> args(o_.program.begin(), o_.program.end());
    if (o_.run_module) args.insert(args.begin(), "-m");
    return preload_->spawn(args, prog.env, out_fd, err_fd);
  }
  ChildSetup setup;
  setup.own_process_group = true;
  setup.stdout_fd = out_fd;
  setup.stderr_fd = err_fd;
  setup.close_other_fds = true;
  setup.default_signals = true;
  setup.mask = no_signals();
  return spawn_program(prog, setup);
}

void AgentWorkers::spawn(Worker& wk) {
  WorkerSpec spec = job_spec();
  spec.rank = wk.rank;
  spec.local_rank = wk.local_rank;
  wk.dir = (run_dir_ / ("attempt_" + std::to_string(attempt_)) / std::to_string(wk.rank)).string();
  fs::create_directories(wk.dir);
  wk.error_file = wk.dir + "/error.json";
  fs::remove(wk.error_file);
  spec.error_file = wk.error_file;
  wk.stop_reason = wk.dir + "/stop-reason";
  fs::remove(wk.stop_reason);
  spec.stop_reason = wk.stop_reason;

  const Program prog{worker_argv(o_), build_worker_env(spec, base_env_)};
  int outp[2], errp[2];
  if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  route_output(wk, wk.out, outp[0]);
  route_output(wk, wk.err, errp[0]);
  pid_t pid = -1;
  try {
    pid = start_program(prog, outp[1], errp[1]);
  } catch (...) {
    close(outp[1]);
    close(errp[1]);
    throw;
  }
  close(outp[1]);
  close(errp[1]);
  wk.pid = pid;
  wk.running = true;
}

bool AgentWorkers::prepare(std::uint32_t attempt, std::uint32_t master_port) {
  attempt_ = attempt;
  master_port_ = master_port;
  workers_.clear();
  workers_.resize(job_.nproc);
  for (std::uint32_t i = 0; i < job_.nproc; ++i) {
    workers_[i].local_rank = i;
    workers_[i].rank = job_.first_rank + i;
  }
  if (o_.preload.empty()) return true;
  if (!preload_) {
    // One server for every attempt: it only ever forks, so it stays clean.
    preload_start_ = Clock::now();
    preload_ = std::make_unique<PreloadServer>(
        o_, PreloadServer::shared_env(build_worker_env(job_spec(), base_env_)));
  }
  return preload_->ready();
}

void AgentWorkers::spawn_all() {
  const auto t0 = Clock::now();
  try {
    for (auto& wk : workers_) spawn(wk);
  } catch (const std::exception& e) {
    if (!preload_) throw;
    return events_.failed(std::string("--preload: ") + e.what());
  }
  spawn_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (o_.verbose || std::getenv("WIREUP_LAUNCH_TIMING"))
    say("timing agent " + std::to_string(job_.task_rank) + " attempt " + std::to_string(attempt_) +
        ": pmix_init_ms=" + std::to_string(job_.pmix_init_ms) +
        " fence_ms=" + std::to_string(job_.fence_ms) + " spawn_ms=" + std::to_string(spawn_ms_) +
        (preload_ ? " preload_ms=" + std::to_string(preload_ms_) : std::string()));
}

void AgentWorkers::watch_output(FdDispatch& d) {
  for (auto& wk : workers_)
    for (auto* s : {&wk.out, &wk.err})
      if (s->pipe >= 0) d.watch(s->pipe, [s] { on_stream_readable(*s); });
}

void AgentWorkers::on_stream_readable(Stream& s) {
  if (s.read_some()) return;
  // EOF before exit: the worker closed its stream; stop polling it.
  close(s.pipe);
  s.pipe = -1;
}

void AgentWorkers::watch_preload(FdDispatch& d, FdDispatch::Handler on_readable) {
  if (!preload_ || !preload_->importing()) return;
  d.watch(preload_->fd(), [this, server = preload_.get(), on_readable = std::move(on_readable)] {
    if (server == preload_.get()) on_readable();
  });
}

bool AgentWorkers::on_preload_readable() {
  try {
    preload_->on_readable();
  } catch (const std::exception& e) {
    events_.failed(std::string("--preload: ") + e.what() + " (its output is above)");
    return false;
  }
  if (!preload_->ready()) return false;
  preload_ms_ = std::chrono::duration<double, std::milli>(Clock::now() - preload_start_).count();
  return true;
}

std::size_t AgentWorkers::running_count() const {
  std::size_t n = 0;
  for (const auto& wk : workers_) n += wk.running;
  return n;
}

void AgentWorkers::kill_all(int sig) {
  // The whole group: a worker's own children go too, even after it exited. A
  // stopped worker (SIGSTOP, a debugger) takes a pending SIGTERM only once it
  // runs again, so a stop is followed by SIGCONT: it ends now, not at SIGKILL.
  const bool ends = sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT;
  for (const auto& wk : workers_) {
    if (wk.pid <= 0) continue;
    killpg(wk.pid, sig);
    if (ends) killpg(wk.pid, SIGCONT);
  }
}

// A stop the agent makes on its own (not a signal it forwards) ends a failed
// attempt: each running worker's stop-reason file says so before the SIGTERM
// (wireup/stop_reason.hpp), so a trainer does not try to save with a rank gone.
void AgentWorkers::write_stop_reasons(const std::string& why) const {
  for (const Worker& wk : workers_) {
    if (!wk.running || wk.stop_reason.empty()) continue;
    std::ofstream out(wk.stop_reason);
    out << "wireup-launch stops the workers: " << why << "\n";
  }
}

void AgentWorkers::on_preload_reaped(int status) {
  preload_->reaped();
  const bool was_ready = preload_->ready();
  preload_.reset();  // a later attempt starts another
  if (was_ready) return;
  const WorkerExit e = decode_wait_status(status);
  events_.failed("--preload: the preload process " +
                 (e.signaled ? "was killed by " + signal_name(e.code)
                             : "exited with code " + std::to_string(e.code)) +
                 " before it was ready (its output is above)");
}

void AgentWorkers::reap() {
  for (;;) {
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) break;
    if (preload_ && pid == preload_->pid()) {
      on_preload_reaped(status);
      continue;
    }
    for (auto& wk : workers_) {
      if (wk.pid != pid || !wk.running) continue;
      wk.running = false;
      wk.exit = decode_wait_status(status);
      wk.out.close_all();
      wk.err.close_all();
      events_.exited(wk);
    }
    // Other pids: adopted orphans; reaped and forgotten.
  }
}

}  // namespace wireup
