// Agent: a failing worker, stopping the workers, the root-cause summary and the exit code.
#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>

#include "agent/agent.hpp"

namespace wireup {

// A failure of the agent's own machinery (not a worker's): no restart helps,
// so every node stops as for a worker failure without restarts left.
void Agent::fail_agent(const std::string& why) {
  say(why);
  if (phase_ == Phase::Finished) return;
  exit_code_ = 1;
  summary_at_ = Clock::now();
  if (conn_.pmix && job_.task_count > 1) {
    abort_at_ = summary_at_ + std::chrono::seconds(1);
    abort_message_ = "wireup-launch on " + job_.host + ": " + why;
  }
  if (phase_ == Phase::WaitingPeers) return finish(1);
  phase_ = Phase::Running;  // so begin_stop stops, whatever was under way
  begin_stop(SIGTERM);
}

void Agent::begin_stop(int sig, Phase as) {
  if (stopping() || phase_ == Phase::Finished) {
    if (phase_ == Phase::Stopping && as == Phase::Restarting) phase_ = as;
    kill_all(sig);  // a second signal is forwarded too
    return;
  }
  phase_ = as;                                  // from Starting too: never spawned, nothing to stop
  if (term_signal_ == 0) write_stop_reasons();  // our own stop: something failed
  kill_all(sig);
  grace_.arm(o_.grace_period);
  if (running_count() == 0) on_all_exited();
}

// A stop the agent makes on its own (not a signal it forwards) ends a failed
// attempt: each running worker's stop-reason file says so before the SIGTERM
// (wireup/stop_reason.hpp), so a trainer does not try to save with a rank gone.
void Agent::write_stop_reasons() const {
  std::string why = "a failure elsewhere in the job";
  if (failure_)
    why = "rank " + std::to_string(failure_->rank) + " on " + failure_->host + " failed (" +
          describe_exit(failure_->exit) + ")";
  for (const Worker& wk : workers_) {
    if (!wk.running || wk.stop_reason.empty()) continue;
    std::ofstream out(wk.stop_reason);
    out << "wireup-launch stops the workers: " << why << "\n";
  }
}

FailureFacts Agent::failure_of(const Worker& wk) const {
  FailureFacts f;
  f.rank = wk.rank;
  f.local_rank = wk.local_rank;
  f.node_rank = job_.group_rank;
  f.host = job_.host;
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
    say("rank " + std::to_string(wk.rank) + " on " + job_.host + " failed (" +
        describe_exit(wk.exit) + "); restarting every worker (restart " +
        std::to_string(attempt_ + 1) + " of " + std::to_string(o_.max_restarts) + ")");
    begin_stop(SIGTERM, Phase::Restarting);
    if (coordinator_)
      coordinator_event(ControlVerb::Fail, nullptr);
    else if (up_)
      up_->send(ControlVerb::Fail, {attempt_});
    return;
  }
  exit_code_ = code;
  tell_lost(code);
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

void Agent::abort_job_if_pending() {
  if (!abort_at_) return;
  abort_at_.reset();
  conn_.pmix->abort(exit_code_, abort_message_);
}

void Agent::on_all_exited() {
  grace_.disarm();
  kill_all(SIGKILL);  // stragglers left in the workers' groups
  // Local workers gone: abort now, but give srun's I/O a moment to carry the
  // summary (seen lost when the step was torn down right after the write).
  if (abort_at_) abort_at_ = std::min(*abort_at_, summary_at_ + std::chrono::milliseconds(300));
  if (term_signal_ != 0) return finish(128 + term_signal_);
  if (phase_ == Phase::Restarting) {
    phase_ = Phase::WaitingPeers;
    if (coordinator_)
      coordinator_event(ControlVerb::Stopped, nullptr);
    else if (up_)
      up_->send(ControlVerb::Stopped, {attempt_});
    return;
  }
  if (phase_ == Phase::Stopping) return finish(exit_code_ != 0 ? exit_code_ : 1);
  // Every local worker succeeded.
  if (coordinator_) {
    phase_ = Phase::WaitingPeers;
    coordinator_event(ControlVerb::Done, nullptr);
  } else if (up_) {
    phase_ = Phase::WaitingPeers;
    up_->send(ControlVerb::Done, {attempt_});
  } else {
    finish(0);
  }
}

void Agent::finish(int code) {
  if (phase_ == Phase::Finished) return;
  phase_ = Phase::Finished;
  exit_code_ = code;
}

}  // namespace wireup
