#pragma once
// Agent mode: spawns this node's workers, forwards signals, fails fast and
// restarts in step with the other agents. class Agent is implemented by
// agent.cpp (set-up and the event loop), agent_workers.cpp (spawning and
// reaping workers), agent_stop.cpp (failures, stopping, the exit code) and
// agent_restarts.cpp (restarts in step across agents).
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_store.hpp"
#include "agent/preload.hpp"
#include "agent/run_dir.hpp"
#include "job_wiring.hpp"
#include "supervision/control_link.hpp"
#include "supervision/fd_dispatch.hpp"
#include "supervision/spawn.hpp"
#include "supervision/worker_stream.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_options.hpp"
#include "wireup/launch_report.hpp"
#include "wireup/restart_coordination.hpp"

namespace wireup {

using Clock = std::chrono::steady_clock;

struct Worker {
  std::uint32_t local_rank = 0, rank = 0;
  pid_t pid = -1;
  bool running = false;
  WorkerExit exit;
  Stream out, err;
  std::string error_file, stop_reason, dir;
};

class Agent {
 public:
  Agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
        const std::vector<std::string>& env)
      : o_(o),
        job_(job),
        conn_(conn),
        master_port_(job.master_port),
        base_env_(env),
        coordinator_(job.task_rank == 0 && o.max_restarts > 0),
        restarts_(job.task_count) {}
  int run();

 private:
  // Starting: waiting for the preload server before spawning. Stopping: to
  // exit; Restarting: to start the next attempt with the other agents.
  // WaitingPeers: every local worker is gone, the other agents are not done.
  enum class Phase { Starting, Running, Stopping, Restarting, WaitingPeers, Finished };

  bool start();  // false: no worker can run here (the job is aborted)
  void link_to_coordinator();
  void supervise_once();
  void on_signals();
  void on_grace_over();
  void accept_peer();
  void on_link_readable(ControlLink& link, FdDispatch& d);
  // A worker failed with no restart left: `code` to every other agent (LOST).
  void tell_lost(int code);
  // Another agent's LOST: stop this agent's workers and exit with `code`.
  void on_lost_elsewhere(int code);
  static void on_stream_readable(Stream& s);
  void setup_signals();
  void setup_run_dir();
  void start_attempt();
  void spawn_all();
  void spawn(Worker& wk);
  void route_output(Worker& wk, Stream& s, int pipe_fd) const;
  pid_t start_program(const Program& prog, int out_fd, int err_fd);
  WorkerSpec job_spec() const;  // what every worker of this attempt shares
  void on_preload_readable();
  void fail_agent(const std::string& why);
  void reap();
  void on_worker_exit(Worker& wk);
  void on_all_exited();
  // Stops the workers with `sig` (SIGKILL after the grace period), to exit
  // or (as Phase::Restarting) to restart; a stop under way only forwards
  // `sig`, and becomes a restart if asked to.
  void begin_stop(int sig, Phase as = Phase::Stopping);
  void write_stop_reasons() const;
  bool stopping() const { return phase_ == Phase::Stopping || phase_ == Phase::Restarting; }
  void kill_all(int sig);
  void finish(int code);
  void abort_job_if_pending();
  FailureFacts failure_of(const Worker& wk) const;
  void handle_control(ControlLink& link, const ControlMessage& m);
  void coordinator_event(ControlVerb verb, ControlLink* from);
  void on_hello(ControlLink& link, const ControlMessage& m);  // agent 0
  void broadcast(ControlVerb verb, const std::vector<std::uint32_t>& args);
  void start_next_attempt();  // agent 0, once every agent stopped
  std::size_t running_count() const;

  const LaunchOptions& o_;
  const JobLayout& job_;
  JobConnections& conn_;
  std::uint32_t master_port_;  // this attempt's (agent 0 picks a new one per restart)
  const std::vector<std::string>& base_env_;
  const bool coordinator_;
  std::vector<Worker> workers_;
  std::uint32_t attempt_ = 0;
  Phase phase_ = Phase::Running;
  int term_signal_ = 0;  // a forwarded signal: exit 128+sig
  int exit_code_ = 0;
  std::optional<FailureFacts> failure_;
  int sigfd_ = -1;
  GraceTimer grace_;  // SIGKILL once the grace period after SIGTERM is over
  std::filesystem::path run_dir_;
  std::filesystem::path temp_run_dir_;               // the agent made run_dir_: removed at the end
  std::unique_ptr<ControlLink> up_;                  // to agent 0
  std::vector<std::unique_ptr<ControlLink>> peers_;  // agent 0's links
  RestartCoordinator restarts_;                      // agent 0: what every agent said this attempt
  double spawn_ms_ = 0;
  std::optional<Clock::time_point> abort_at_;  // PMIx_Abort the step then
  std::string abort_message_;
  Clock::time_point summary_at_;
  std::unique_ptr<AgentStore> store_;       // agent 0 with --agent-store
  std::unique_ptr<PreloadServer> preload_;  // --preload
  Clock::time_point preload_start_;
  double preload_ms_ = 0;
};

// Runs the agent; returns the launcher's exit code.
int run_agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
              const std::vector<std::string>& base_env);

}  // namespace wireup
