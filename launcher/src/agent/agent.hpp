#pragma once
// Agent mode: spawns this node's workers, forwards signals, fails fast and
// restarts in step with the other agents. class Agent holds the phase and the
// parts, each owning its state: AgentWorkers (agent_workers: the run
// directory, spawning, output, reaping), AgentStop (agent_stop: signals,
// failures, stopping, the exit code), AgentRestarts (agent_restarts: restarts
// in step across agents) and AgentStore (agent_store). Its event loop
// (agent.cpp) hands each event to the part that owns it.
#include <memory>
#include <string>
#include <vector>

#include "agent/agent_restarts.hpp"
#include "agent/agent_stop.hpp"
#include "agent/agent_store.hpp"
#include "agent/agent_workers.hpp"
#include "job_wiring.hpp"
#include "wireup/launch_options.hpp"

namespace wireup {

class Agent {
 public:
  Agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
        const std::vector<std::string>& env);
  int run();

 private:
  bool start();          // false: no worker can run here (the job is aborted)
  void start_attempt();  // of restarts_.attempt(): now, or once the preload server is ready
  void spawn_all();
  void on_preload_readable();
  void supervise_once();

  JobConnections& conn_;  // hands the agent store its listening socket
  AgentPhase phase_ = AgentPhase::Running;
  AgentWorkers workers_;
  AgentStop stop_;
  AgentRestarts restarts_;
  std::unique_ptr<AgentStore> store_;  // agent 0 with --agent-store
};

// Runs the agent; returns the launcher's exit code.
int run_agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
              const std::vector<std::string>& base_env);

}  // namespace wireup
