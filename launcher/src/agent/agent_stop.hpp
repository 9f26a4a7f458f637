#pragma once
// The agent's stop: forwarded signals, a failing worker, stopping the workers
// (to exit or to restart), the grace period, the root-cause summary, the
// PMIx abort of the step and the exit code.
#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "agent/agent_workers.hpp"
#include "job_wiring.hpp"
#include "supervision/spawn.hpp"
#include "wireup/control_message.hpp"
#include "wireup/launch_options.hpp"
#include "wireup/launch_report.hpp"

namespace wireup {

// Where the agent is. Starting: waiting for the preload server before
// spawning. Stopping: to exit; Restarting: to start the next attempt with the
// other agents. WaitingPeers: every local worker is gone, the other agents are
// not done. The agent owns it; its stop makes every move but the start of an
// attempt.
enum class AgentPhase { Starting, Running, Stopping, Restarting, WaitingPeers, Finished };

class AgentStop {
 public:
  // How the stop reaches the other agents (AgentRestarts).
  struct Peers {
    // FAIL, STOPPED or DONE to agent 0 (on agent 0, to its own coordinator).
    // False: no other agent waits for this one's word.
    std::function<bool(ControlVerb)> report;
    std::function<void(int)> tell_lost;  // a failure with no restart left: its code
  };

  AgentStop(const LaunchOptions& o, const JobLayout& job, JobConnections& conn, AgentPhase& phase,
            AgentWorkers& workers, Peers peers)
      : o_(o), job_(job), conn_(conn), phase_(phase), workers_(workers), peers_(std::move(peers)) {}

  void setup_signals();
  AgentPhase phase() const { return phase_; }
  bool stopping() const {
    return phase_ == AgentPhase::Stopping || phase_ == AgentPhase::Restarting;
  }
  void new_attempt() { failure_.reset(); }
  int exit_code() const { return exit_code_; }

  // Events of the event loop.
  int signal_fd() const { return sigfd_; }
  int grace_fd() const { return grace_.fd(); }
  void on_signals();
  void on_grace_over();
  void on_worker_exit(const Worker& wk);
  void on_all_exited();  // every local worker is gone

  // Stops the workers with `sig` (SIGKILL after the grace period), to exit
  // or (as AgentPhase::Restarting) to restart; a stop under way only forwards
  // `sig`, and becomes a restart if asked to.
  void begin_stop(int sig, AgentPhase as = AgentPhase::Stopping);
  // Agent 0's decision to restart, on agent 0: its workers stop to restart
  // (those that had all succeeded too), unless a stop is under way.
  void stop_to_restart();
  void stop_for_good(int code);  // whatever was under way; exit with `code`
  // A failure of the agent's own machinery (not a worker's): no restart helps,
  // so every node stops as for a worker failure without restarts left.
  void fail_agent(const std::string& why);
  void lost_contact();            // another agent vanished mid-run
  void lost_elsewhere(int code);  // another agent's LOST: exit with `code`
  void finish(int code);

  // No worker can run here, so none runs anywhere: the step is aborted now.
  void abort_job(const std::string& why);
  int abort_timeout_ms() const;  // until the pending PMIx abort; -1: none
  void abort_if_due();
  void abort_when_due();  // at the end: waits for the pending abort, then aborts

 private:
  FailureFacts failure_of(const Worker& wk) const;
  void write_stop_reasons() const;
  void abort_job_if_pending();

  const LaunchOptions& o_;
  const JobLayout& job_;
  JobConnections& conn_;
  AgentPhase& phase_;
  AgentWorkers& workers_;
  const Peers peers_;
  int sigfd_ = -1;
  GraceTimer grace_;     // SIGKILL once the grace period after SIGTERM is over
  int term_signal_ = 0;  // a forwarded signal: exit 128+sig
  int exit_code_ = 0;
  std::optional<FailureFacts> failure_;
  std::optional<Clock::time_point> abort_at_;  // PMIx_Abort the step then
  std::string abort_message_;
  Clock::time_point summary_at_;
};

}  // namespace wireup
