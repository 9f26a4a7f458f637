#include "agent/agent_stop.hpp"

#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "supervision/launcher_signals.hpp"

namespace wireup {

void AgentStop::setup_signals() {
  const sigset_t set = launcher_signal_set(o_);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  sigfd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  signal(SIGPIPE, SIG_IGN);
}

void AgentStop::on_signals() {
  signalfd_siginfo si;
  while (read(sigfd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
    const int sig = static_cast<int>(si.ssi_signo);
    if (sig == SIGCHLD) continue;  // reaped after every round in any case
    if (term_signal_ == 0) {
      term_signal_ = sig;
      say("got " + signal_name(sig) + "; forwarding to " +
          std::to_string(workers_.running_count()) + " worker(s), SIGKILL after " +
          std::to_string(o_.grace_period) + " s");
    }
    if (phase_ == AgentPhase::WaitingPeers && workers_.running_count() == 0)
      finish(128 + sig);
    else
      begin_stop(sig);
  }
}

void AgentStop::on_grace_over() {
  if (grace_.fired() && workers_.running_count() > 0) {
    say("grace period over; killing " + std::to_string(workers_.running_count()) + " worker(s)");
    workers_.kill_all(SIGKILL);
  }
}

void AgentStop::fail_agent(const std::string& why) {
  say(why);
  if (phase_ == AgentPhase::Finished) return;
  summary_at_ = Clock::now();
  if (conn_.pmix && job_.task_count > 1) {
    abort_at_ = summary_at_ + std::chrono::seconds(1);
    abort_message_ = "wireup-launch on " + job_.host + ": " + why;
  }
  stop_for_good(1);
}

void AgentStop::stop_for_good(int code) {
  exit_code_ = code;
  if (phase_ == AgentPhase::WaitingPeers) return finish(code);
  phase_ = AgentPhase::Running;  // so begin_stop stops, whatever was under way
  begin_stop(SIGTERM);
}

void AgentStop::begin_stop(int sig, AgentPhase as) {
  if (stopping() || phase_ == AgentPhase::Finished) {
    if (phase_ == AgentPhase::Stopping && as == AgentPhase::Restarting) phase_ = as;
    workers_.kill_all(sig);  // a second signal is forwarded too
    return;
  }
  phase_ = as;                                  // from Starting too: never spawned, nothing to stop
  if (term_signal_ == 0) write_stop_reasons();  // our own stop: something failed
  workers_.kill_all(sig);
  grace_.arm(o_.grace_period);
  if (workers_.running_count() == 0) on_all_exited();
}

void AgentStop::stop_to_restart() {
  if (phase_ != AgentPhase::Starting && phase_ != AgentPhase::Running &&
      phase_ != AgentPhase::WaitingPeers)
    return;
  if (phase_ == AgentPhase::WaitingPeers) phase_ = AgentPhase::Running;  // done before the failure
  begin_stop(SIGTERM, AgentPhase::Restarting);
}

void AgentStop::lost_contact() {
  if (phase_ == AgentPhase::Finished) return;
  say("lost contact with another agent; stopping");
  if (exit_code_ == 0) exit_code_ = 1;
  if (phase_ == AgentPhase::Restarting) phase_ = AgentPhase::Stopping;  // stopping for good now
  if (phase_ == AgentPhase::WaitingPeers)
    finish(exit_code_);
  else
    begin_stop(SIGTERM);
}

// The job ends with the root cause's code on every agent: without it an agent
// that only saw its link drop would exit 1, and mpirun (or srun) might report
// that 1 instead of the failed worker's code.
void AgentStop::lost_elsewhere(int code) {
  if (phase_ == AgentPhase::Finished) return;
  if (exit_code_ == 0) exit_code_ = code;
  if (phase_ == AgentPhase::WaitingPeers) return finish(exit_code_);
  if (phase_ == AgentPhase::Restarting) {
    phase_ = AgentPhase::Stopping;  // stopping already: for good now
    return;
  }
  if (!stopping()) begin_stop(SIGTERM);
}

void AgentStop::write_stop_reasons() const {
  std::string why = "a failure elsewhere in the job";
  if (failure_)
    why = "rank " + std::to_string(failure_->rank) + " on " + failure_->host + " failed (" +
          describe_exit(failure_->exit) + ")";
  workers_.write_stop_reasons(why);
}

FailureFacts AgentStop::failure_of(const Worker& wk) const {
  FailureFacts f;
  f.rank = wk.rank;
  f.local_rank = wk.local_rank;
  f.node_rank = job_.group_rank;
  f.host = job_.host;
  f.attempt = workers_.attempt();
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

void AgentStop::on_worker_exit(const Worker& wk) {
  const bool failed = wk.exit.signaled || wk.exit.code != 0;
  if (!failed || phase_ != AgentPhase::Running) return;  // exits we caused are no root cause
  failure_ = failure_of(wk);
  const int code = launcher_exit_code(wk.exit);
  const std::uint32_t attempt = workers_.attempt();
  if (attempt < o_.max_restarts) {
    say("rank " + std::to_string(wk.rank) + " on " + job_.host + " failed (" +
        describe_exit(wk.exit) + "); restarting every worker (restart " +
        std::to_string(attempt + 1) + " of " + std::to_string(o_.max_restarts) + ")");
    begin_stop(SIGTERM, AgentPhase::Restarting);
    peers_.report(ControlVerb::Fail);
    return;
  }
  exit_code_ = code;
  peers_.tell_lost(code);
  write_fd(2, format_failure_summary(*failure_));
  // Every other node stops now, not when its collectives time out: as soon as
  // the local workers are gone (so the summary and their last output reach
  // srun before the step is torn down), and at most 1 s from now.
  summary_at_ = Clock::now();
  if (conn_.pmix && job_.task_count > 1) {
    abort_at_ = summary_at_ + std::chrono::seconds(1);
    abort_message_ = "wireup-launch: rank " + std::to_string(failure_->rank) + " on " + job_.host +
                     " failed with exit code " + std::to_string(exit_code_);
  }
  begin_stop(SIGTERM);
}

void AgentStop::on_all_exited() {
  grace_.disarm();
  workers_.kill_all(SIGKILL);  // stragglers left in the workers' groups
  // Local workers gone: abort now, but give srun's I/O a moment to carry the
  // summary (seen lost when the step was torn down right after the write).
  if (abort_at_) abort_at_ = std::min(*abort_at_, summary_at_ + std::chrono::milliseconds(300));
  if (term_signal_ != 0) return finish(128 + term_signal_);
  if (phase_ == AgentPhase::Restarting) {
    phase_ = AgentPhase::WaitingPeers;
    peers_.report(ControlVerb::Stopped);
    return;
  }
  if (phase_ == AgentPhase::Stopping) return finish(exit_code_ != 0 ? exit_code_ : 1);
  // Every local worker succeeded.
  phase_ = AgentPhase::WaitingPeers;
  if (!peers_.report(ControlVerb::Done)) finish(0);
}

void AgentStop::finish(int code) {
  if (phase_ == AgentPhase::Finished) return;
  phase_ = AgentPhase::Finished;
  exit_code_ = code;
}

void AgentStop::abort_job(const std::string& why) {
  if (conn_.pmix && job_.task_count > 1) conn_.pmix->abort(1, "wireup-launch: " + why);
}

int AgentStop::abort_timeout_ms() const {
  if (!abort_at_) return -1;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(*abort_at_ - Clock::now());
  return static_cast<int>(std::max<long>(0, left.count()));
}

void AgentStop::abort_if_due() {
  if (abort_at_ && Clock::now() >= *abort_at_) abort_job_if_pending();
}

void AgentStop::abort_when_due() {
  if (!abort_at_) return;
  std::this_thread::sleep_until(*abort_at_);
  abort_job_if_pending();
}

void AgentStop::abort_job_if_pending() {
  if (!abort_at_) return;
  abort_at_.reset();
  conn_.pmix->abort(exit_code_, abort_message_);
}

}  // namespace wireup
