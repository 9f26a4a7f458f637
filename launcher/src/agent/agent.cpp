#include "agent/agent.hpp"

#include <csignal>
#include <exception>

#include "supervision/fd_dispatch.hpp"
#include "supervision/process_tree.hpp"
#include "supervision/worker_stream.hpp"

namespace wireup {

Agent::Agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
             const std::vector<std::string>& env)
    : conn_(conn),
      workers_(o, job, env,
               {.exited = [this](const Worker& wk) { stop_.on_worker_exit(wk); },
                .failed = [this](const std::string& why) { stop_.fail_agent(why); }}),
      stop_(o, job, conn, phase_, workers_,
            {.report = [this](ControlVerb verb) { return restarts_.report(verb); },
             .tell_lost = [this](int code) { restarts_.tell_lost(code); }}),
      restarts_(o, job, conn, stop_,
                {.empty_store =
                     [this] {
                       if (store_) store_->clear_keys();
                     },
                 .start_attempt = [this] { start_attempt(); }}) {}

bool Agent::start() {
  stop_.setup_signals();
  AgentWorkers::adopt_orphans();
  restarts_.link_to_coordinator();  // before the run directory: nothing to clean up when it throws
  try {
    workers_.make_run_dir();
  } catch (const std::exception& e) {
    // No worker runs here, so none runs anywhere: every node stops now.
    say(e.what());
    stop_.abort_job(e.what());
    return false;
  }
  if (const int fd = conn_.take_store_listener(); fd >= 0)
    store_ = std::make_unique<AgentStore>(fd);
  start_attempt();
  return true;
}

void Agent::start_attempt() {
  stop_.new_attempt();
  restarts_.new_attempt();
  phase_ = AgentPhase::Running;
  if (!workers_.prepare(restarts_.attempt(), restarts_.master_port())) {
    phase_ = AgentPhase::Starting;  // spawn_all() once the preload server says READY
    return;
  }
  spawn_all();
}

void Agent::spawn_all() {
  phase_ = AgentPhase::Running;
  workers_.spawn_all();
}

void Agent::on_preload_readable() {
  if (workers_.on_preload_readable() && phase_ == AgentPhase::Starting) spawn_all();
}

int Agent::run() {
  if (!start()) return 1;
  while (phase_ != AgentPhase::Finished) supervise_once();
  stop_.abort_when_due();
  workers_.kill_all(SIGKILL);
  workers_.stop_preload();
  // What left the workers' process groups (a setsid daemon) is still below this
  // subreaper: it ends with the agent too.
  kill_descendants();
  store_.reset();
  workers_.remove_run_dir();
  return stop_.exit_code();
}

// One round of the event loop: the workers' output, signals, the grace timer,
// the control links and the preload server, then every exited child.
void Agent::supervise_once() {
  FdDispatch d;
  workers_.watch_output(d);
  d.watch(stop_.signal_fd(), [this] { stop_.on_signals(); });
  d.watch(stop_.grace_fd(), [this] { stop_.on_grace_over(); });
  d.watch(restarts_.listen_fd(), [this] { restarts_.accept_peer(); });
  restarts_.watch_links(d);
  workers_.watch_preload(d, [this] {
    if (phase_ != AgentPhase::Finished) on_preload_readable();
  });
  if (!d.dispatch(stop_.abort_timeout_ms())) return;
  workers_.reap();
  if ((phase_ == AgentPhase::Running || stop_.stopping()) && workers_.all_exited())
    stop_.on_all_exited();
  stop_.abort_if_due();
}

int run_agent(const LaunchOptions& o, const JobLayout& job, JobConnections& conn,
              const std::vector<std::string>& base_env) {
  Agent a(o, job, conn, base_env);
  return a.run();
}

}  // namespace wireup
