// Agent: --max-restarts across agents, coordinated by agent 0 over control links.
#include <csignal>

#include "agent/agent.hpp"
#include "net.hpp"
#include "wireup/control_endpoint.hpp"

namespace wireup {

void Agent::broadcast(ControlVerb verb, const std::vector<std::uint32_t>& args) {
  for (auto& p : peers_) p->send(verb, args);
}

// Agent 0's view: `from` is a peer's link, nullptr for itself.
void Agent::coordinator_event(ControlVerb verb, ControlLink* from) {
  std::optional<RestartCoordinator::Peer> peer;
  if (from) peer = static_cast<RestartCoordinator::Peer>(from->fd());
  using Step = RestartCoordinator::Step;
  Step step = Step::None;
  if (verb == ControlVerb::Fail)
    step = restarts_.failed();
  else if (verb == ControlVerb::Done)
    step = restarts_.done(peer);
  else if (verb == ControlVerb::Stopped)
    step = restarts_.stopped(peer);
  switch (step) {
    case Step::None:
      return;
    case Step::StopAll:
      broadcast(ControlVerb::Stop, {attempt_});
      if (phase_ == Phase::Starting || phase_ == Phase::Running || phase_ == Phase::WaitingPeers) {
        if (phase_ == Phase::WaitingPeers) phase_ = Phase::Running;  // done before the failure
        begin_stop(SIGTERM, Phase::Restarting);
      }
      return;
    case Step::ExitAll:
      broadcast(ControlVerb::Exit, {0});
      return finish(0);
    case Step::StartNext:
      return start_next_attempt();
  }
}

void Agent::start_next_attempt() {
  ++attempt_;
  // The agent store stays on its port, emptied for the new attempt before any
  // agent starts it: torch 1.x's env:// keys each attempt apart
  // (/worker/attempt_N), torch 2.x's does not (torchrun makes a fresh store per
  // round), so its workers would find the last attempt's gloo addresses.
  if (store_) store_->clear_keys();
  if (!job_.agent_store) master_port_ = pick_free_port(master_port_ + 1);
  broadcast(ControlVerb::Start, {attempt_, master_port_});
  start_attempt();
}

// Without PMIx, ranks assume every agent runs agent 0's worker count: a
// HELLO that says otherwise stops the job (exit 2) before a rendezvous hangs.
void Agent::on_hello(ControlLink& link, const ControlMessage& m) {
  const auto hello = parse_hello(m);
  if (!hello) return;
  if (const auto foreign = foreign_hello(*hello, static_cast<std::uint32_t>(job_.job_id),
                                         static_cast<std::uint32_t>(job_.step_id))) {
    say(*foreign);
    link.refused = true;
    return;
  }
  link.peer_rank = hello->rank;
  if (job_.source == "pmix") return;  // the exchange told every agent each K
  const auto mismatch = nproc_mismatch(*hello, job_.nproc);
  if (!mismatch || phase_ == Phase::Finished) return;
  say(*mismatch);
  broadcast(ControlVerb::Exit, {2});
  exit_code_ = 2;
  if (phase_ == Phase::WaitingPeers) return finish(2);
  phase_ = Phase::Running;  // so begin_stop stops for good, whatever was under way
  begin_stop(SIGTERM);
}

void Agent::tell_lost(int code) {
  const std::vector<std::uint32_t> args{static_cast<std::uint32_t>(code)};
  if (coordinator_)
    broadcast(ControlVerb::Lost, args);
  else if (up_)
    up_->send(ControlVerb::Lost, args);
}

// The job ends with the root cause's code on every agent: without it an agent
// that only saw its link drop would exit 1, and mpirun (or srun) might report
// that 1 instead of the failed worker's code.
void Agent::on_lost_elsewhere(int code) {
  if (phase_ == Phase::Finished) return;
  if (exit_code_ == 0) exit_code_ = code;
  if (coordinator_) broadcast(ControlVerb::Lost, {static_cast<std::uint32_t>(code)});
  if (phase_ == Phase::WaitingPeers) return finish(exit_code_);
  if (phase_ == Phase::Restarting) {
    phase_ = Phase::Stopping;  // stopping already: for good now
    return;
  }
  if (!stopping()) begin_stop(SIGTERM);
}

void Agent::handle_control(ControlLink& link, const ControlMessage& m) {
  if (m.verb == ControlVerb::Lost && !m.args.empty())
    return on_lost_elsewhere(static_cast<int>(m.args[0]));
  if (coordinator_) {
    if (m.verb == ControlVerb::Hello)
      on_hello(link, m);
    else if (!m.args.empty() && m.args[0] != attempt_)
      return;  // from an attempt already over
    else
      coordinator_event(m.verb, &link);
    return;
  }
  if (m.verb == ControlVerb::Stop && !m.args.empty() && m.args[0] == attempt_) {
    if (phase_ == Phase::WaitingPeers)  // our workers had all succeeded
      up_->send(ControlVerb::Stopped, {attempt_});
    else
      begin_stop(SIGTERM, Phase::Restarting);
  } else if (m.verb == ControlVerb::Start && m.args.size() == 2) {
    attempt_ = m.args[0];
    master_port_ = m.args[1];
    start_attempt();
  } else if (m.verb == ControlVerb::Exit && !m.args.empty()) {
    finish(static_cast<int>(m.args[0]));
  }
}

}  // namespace wireup
