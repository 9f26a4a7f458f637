#include "agent/agent.hpp"

#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "net.hpp"
#include "supervision/fd_dispatch.hpp"
#include "supervision/launcher_signals.hpp"
#include "supervision/process_tree.hpp"
#include "wireup/control_endpoint.hpp"
#include "wireup/rendezvous.hpp"

namespace wireup {

namespace fs = std::filesystem;

void Agent::setup_signals() {
  const sigset_t set = launcher_signal_set(o_);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sigfd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);
  // Orphans of our workers (dataloaders, shells) become ours, so they are reaped and killed.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
}

void Agent::setup_run_dir() {
  if (!o_.log_dir.empty()) {
    run_dir_ = o_.log_dir;
  } else {
    run_dir_ = make_private_run_dir();
    temp_run_dir_ = run_dir_;
  }
}

// Links to agent 0 when it coordinates restarts. Without PMIx agent 0 may not
// listen yet: the connect is retried for job_.control_wait_s.
void Agent::link_to_coordinator() {
  if (coordinator_ || o_.max_restarts == 0 || job_.control.empty()) return;
  const auto [addr, port] = split_endpoint("agent 0's control address", job_.control);
  try {
    up_ = std::make_unique<ControlLink>(connect_tcp(addr, port, job_.control_wait_s * 1000));
  } catch (const std::exception& e) {
    if (job_.source == "pmix") throw;
    throw std::runtime_error(control_unreachable(addr, port, job_.control_wait_s, e.what()));
  }
  up_->send(ControlVerb::Hello,
            hello_args({job_.task_rank, job_.nproc, static_cast<std::uint32_t>(job_.job_id),
                        static_cast<std::uint32_t>(job_.step_id)}));
}

bool Agent::start() {
  setup_signals();
  link_to_coordinator();  // before the run directory: nothing to clean up when it throws
  try {
    setup_run_dir();
  } catch (const std::exception& e) {
    // No worker runs here, so none runs anywhere: every node stops now.
    say(e.what());
    if (conn_.pmix && job_.task_count > 1)
      conn_.pmix->abort(1, std::string("wireup-launch: ") + e.what());
    return false;
  }
  if (const int fd = conn_.take_store_listener(); fd >= 0)
    store_ = std::make_unique<AgentStore>(fd);
  start_attempt();
  return true;
}

int Agent::run() {
  if (!start()) return 1;
  while (phase_ != Phase::Finished) supervise_once();
  if (abort_at_) {
    std::this_thread::sleep_until(*abort_at_);
    abort_job_if_pending();
  }
  kill_all(SIGKILL);
  preload_.reset();
  // What left the workers' process groups (a setsid daemon) is still below this
  // subreaper: it ends with the agent too.
  kill_descendants();
  store_.reset();
  if (!temp_run_dir_.empty()) {
    std::error_code ec;
    fs::remove_all(temp_run_dir_, ec);
  }
  return exit_code_;
}

// One round of the event loop: the workers' output, signals, the grace timer,
// the control links and the preload server, then every exited child.
void Agent::supervise_once() {
  FdDispatch d;
  for (auto& wk : workers_)
    for (auto* s : {&wk.out, &wk.err})
      if (s->pipe >= 0) d.watch(s->pipe, [s] { on_stream_readable(*s); });
  d.watch(sigfd_, [this] { on_signals(); });
  d.watch(grace_.fd(), [this] { on_grace_over(); });
  d.watch(conn_.control_listen_fd, [this] { accept_peer(); });
  if (up_) d.watch(up_->fd(), [this, &d, l = up_.get()] { on_link_readable(*l, d); });
  for (auto& p : peers_) d.watch(p->fd(), [this, &d, l = p.get()] { on_link_readable(*l, d); });
  if (preload_ && preload_->importing())
    d.watch(preload_->fd(), [this, server = preload_.get()] {
      if (server == preload_.get() && phase_ != Phase::Finished) on_preload_readable();
    });
  int timeout_ms = -1;
  if (abort_at_) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*abort_at_ - Clock::now());
    timeout_ms = static_cast<int>(std::max<long>(0, left.count()));
  }
  if (!d.dispatch(timeout_ms)) return;
  reap();
  if (abort_at_ && Clock::now() >= *abort_at_) abort_job_if_pending();
}

void Agent::on_stream_readable(Stream& s) {
  if (s.read_some()) return;
  // EOF before exit: the worker closed its stream; stop polling it.
  close(s.pipe);
  s.pipe = -1;
}

void Agent::on_signals() {
  signalfd_siginfo si;
  while (read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) continue;  // reaped after every round in any case
    if (term_signal_ == 0) {
      term_signal_ = sig;
      say("got " + signal_name(sig) + "; forwarding to " + std::to_string(running_count()) +
          " worker(s), SIGKILL after " + std::to_string(o_.grace_period) + " s");
    }
    if (phase_ == Phase::WaitingPeers && running_count() == 0)
      finish(128 + sig);
    else
      begin_stop(sig);
  }
}

void Agent::on_grace_over() {
  if (grace_.fired() && running_count() > 0) {
    say("grace period over; killing " + std::to_string(running_count()) + " worker(s)");
    kill_all(SIGKILL);
  }
}

void Agent::accept_peer() {
  const int fd = accept4(conn_.control_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  peers_.push_back(std::make_unique<ControlLink>(fd));
  restarts_.linked(static_cast<RestartCoordinator::Peer>(fd));
}

void Agent::on_link_readable(ControlLink& link, FdDispatch& d) {
  if (phase_ == Phase::Finished) return;
  std::vector<ControlMessage> msgs;
  const bool alive = link.receive(msgs);
  for (const auto& m : msgs)
    if (!link.refused) handle_control(link, m);
  if (alive && !link.refused) return;
  d.end_round();       // the links change
  if (link.refused) {  // not one of this step's agents: nothing to stop
    restarts_.lost(static_cast<RestartCoordinator::Peer>(link.fd()));
    std::erase_if(peers_, [&](auto& p) { return p.get() == &link; });
    return;
  }
  // An agent vanished mid-run: the step cannot go on in step.
  const bool was_up = &link == up_.get();
  restarts_.lost(static_cast<RestartCoordinator::Peer>(link.fd()));
  std::erase_if(peers_, [&](auto& p) { return p.get() == &link; });
  if (was_up) up_.reset();
  if (phase_ == Phase::Finished) return;
  say("lost contact with another agent; stopping");
  if (exit_code_ == 0) exit_code_ = 1;
  if (phase_ == Phase::Restarting) phase_ = Phase::Stopping;  // stopping for good now
  if (phase_ == Phase::WaitingPeers)
    finish(exit_code_);
  else
    begin_stop(SIGTERM);
}

int run_agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
              const std::vector<std::string>& base_env) {
  Agent a(o, job, conn, base_env);
  return a.run();
}

}  // namespace wireup
