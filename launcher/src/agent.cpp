#include "agent.hpp"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "agent_state.hpp"
#include "launcher_signals.hpp"
#include "net.hpp"
#include "process_tree.hpp"
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
    temp_run_dir_ = true;
  }
}

int Agent::run() {
  setup_signals();
  try {
    setup_run_dir();
  } catch (const std::exception& e) {
    // No worker runs here, so none runs anywhere: every node stops now.
    say(e.what());
    if (w_.pmix && w_.task_count > 1) w_.pmix->abort(1, std::string("wireup-launch: ") + e.what());
    return 1;
  }
  if (w_.store_listen_fd >= 0) {
    store_ = std::make_unique<AgentStore>(w_.store_listen_fd);
    w_.store_listen_fd = -1;  // the store owns it
  }
  if (!coordinator_ && o_.max_restarts > 0 && !w_.control.empty()) {
    const auto [addr, port] = split_endpoint("agent 0's control address", w_.control);
    up_ = std::make_unique<ControlLink>(connect_tcp(addr, port, 30000));
    up_->send(ControlVerb::Hello, {w_.task_rank});
  }
  start_attempt();

  while (phase_ != Phase::Finished) {
    std::vector<pollfd> fds;
    std::vector<Stream*> streams;
    std::vector<ControlLink*> links;
    fds.push_back({sigfd_, POLLIN, 0});
    fds.push_back({grace_.fd(), POLLIN, 0});
    fds.push_back({w_.control_listen_fd, POLLIN, 0});
    for (auto& wk : workers_)
      for (auto* s : {&wk.out, &wk.err})
        if (s->pipe >= 0) {
          fds.push_back({s->pipe, POLLIN, 0});
          streams.push_back(s);
        }
    const std::size_t first_link = fds.size();
    if (up_) {
      fds.push_back({up_->fd(), POLLIN, 0});
      links.push_back(up_.get());
    }
    for (auto& p : peers_) {
      fds.push_back({p->fd(), POLLIN, 0});
      links.push_back(p.get());
    }
    const std::size_t preload_at = fds.size();
    PreloadServer* const importing = preload_ && preload_->importing() ? preload_.get() : nullptr;
    if (importing) fds.push_back({importing->fd(), POLLIN, 0});

    int timeout_ms = -1;
    if (abort_at_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*abort_at_ - Clock::now());
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
        if (phase_ == Phase::WaitingPeers && running_count() == 0)
          finish(128 + sig);
        else
          begin_stop(sig);
      }
    }
    if (fds[1].revents & POLLIN) {
      if (grace_.fired() && running_count() > 0) {
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
          if (phase_ == Phase::WaitingPeers)
            finish(exit_code_);
          else
            begin_stop(SIGTERM);
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
  // What left the workers' process groups (a setsid daemon) is still below this
  // subreaper: it ends with the agent too.
  kill_descendants();
  store_.reset();
  if (temp_run_dir_) {
    std::error_code ec;
    fs::remove_all(run_dir_, ec);
  }
  return exit_code_;
}

int run_agent(const LaunchOptions& o, Wiring& w, const std::vector<std::string>& base_env) {
  Agent a(o, w, base_env);
  return a.run();
}

}  // namespace wireup
