#pragma once
// The agent's restarts in step (--max-restarts): the attempt counter, the
// control links (to agent 0; on agent 0, from every other agent), agent 0's
// RestartCoordinator and the MASTER_PORT of each attempt.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "agent/agent_stop.hpp"
#include "job_wiring.hpp"
#include "supervision/control_link.hpp"
#include "supervision/fd_dispatch.hpp"
#include "wireup/control_message.hpp"
#include "wireup/launch_options.hpp"
#include "wireup/restart_coordination.hpp"

namespace wireup {

class AgentRestarts {
 public:
  // What the restarts ask of the rest of the agent.
  struct Hooks {
    std::function<void()> empty_store;    // agent 0, before any agent starts the next attempt
    std::function<void()> start_attempt;  // this agent's workers for attempt()
  };

  AgentRestarts(const LaunchOptions& o, const JobLayout& job, JobConnections& conn, AgentStop& stop,
                Hooks hooks)
      : o_(o),
        job_(job),
        conn_(conn),
        stop_(stop),
        hooks_(std::move(hooks)),
        coordinator_(job.task_rank == 0 && o.max_restarts > 0),
        master_port_(job.master_port),
        coordination_(job.task_count) {}

  // Links to agent 0 when it coordinates restarts. Without PMIx agent 0 may
  // not listen yet: the connect is retried for job.control_wait_s.
  void link_to_coordinator();
  std::uint32_t attempt() const { return attempt_; }
  // attempt()'s MASTER_PORT: agent 0's pick, sent with START; with --agent-store
  // always the store's.
  std::uint32_t master_port() const { return master_port_; }
  void new_attempt() { coordination_.new_attempt(); }

  // Events of the event loop.
  int listen_fd() const { return conn_.control_listen_fd; }
  void accept_peer();
  void watch_links(FdDispatch& d);  // agent 0's link, or every other agent's

  // From this agent's stop (AgentStop::Peers).
  bool report(ControlVerb verb);  // FAIL, STOPPED or DONE; false: no agent waits for it
  void tell_lost(int code);       // a worker failed with no restart left: `code` to every agent

 private:
  void on_link_readable(ControlLink& link, FdDispatch& d);
  void handle_control(ControlLink& link, const ControlMessage& m);
  // Another agent's LOST: stop this agent's workers and exit with `code`.
  void on_lost_elsewhere(int code);
  void coordinator_event(ControlVerb verb, ControlLink* from);
  void on_hello(ControlLink& link, const ControlMessage& m);  // agent 0
  void broadcast(ControlVerb verb, const std::vector<std::uint32_t>& args);
  void start_next_attempt();  // agent 0, once every agent stopped

  const LaunchOptions& o_;
  const JobLayout& job_;
  JobConnections& conn_;
  AgentStop& stop_;
  const Hooks hooks_;
  const bool coordinator_;
  std::uint32_t attempt_ = 0;
  std::uint32_t master_port_;        // this attempt's (agent 0 picks a new one per restart)
  std::unique_ptr<ControlLink> up_;  // to agent 0
  std::vector<std::unique_ptr<ControlLink>> peers_;  // agent 0's links
  RestartCoordinator coordination_;                  // agent 0: what every agent said this attempt
};

}  // namespace wireup
