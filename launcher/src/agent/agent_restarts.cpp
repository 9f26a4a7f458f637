#include "agent/agent_restarts.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <csignal>
#include <optional>
#include <stdexcept>

#include "net.hpp"
#include "supervision/worker_stream.hpp"
#include "wireup/control_endpoint.hpp"

namespace wireup {

void AgentRestarts::link_to_coordinator() {
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

void AgentRestarts::accept_peer() {
  const int fd = accept4(conn_.control_listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0) return;
  peers_.push_back(std::make_unique<ControlLink>(fd));
  coordination_.linked(static_cast<RestartCoordinator::Peer>(fd));
}

void AgentRestarts::watch_links(FdDispatch& d) {
  if (up_) d.watch(up_->fd(), [this, &d, l = up_.get()] { on_link_readable(*l, d); });
  for (auto& p : peers_) d.watch(p->fd(), [this, &d, l = p.get()] { on_link_readable(*l, d); });
}

void AgentRestarts::on_link_readable(ControlLink& link, FdDispatch& d) {
  if (stop_.phase() == AgentPhase::Finished) return;
  std::vector<ControlMessage> msgs;
  const bool alive = link.receive(msgs);
  for (const auto& m : msgs)
    if (!link.refused) handle_control(link, m);
  if (alive && !link.refused) return;
  d.end_round();       // the links change
  if (link.refused) {  // not one of this step's agents: nothing to stop
    coordination_.lost(static_cast<RestartCoordinator::Peer>(link.fd()));
    std::erase_if(peers_, [&](auto& p) { return p.get() == &link; });
    return;
  }
  // An agent vanished mid-run: the step cannot go on in step.
  const bool was_up = &link == up_.get();
  coordination_.lost(static_cast<RestartCoordinator::Peer>(link.fd()));
  std::erase_if(peers_, [&](auto& p) { return p.get() == &link; });
  if (was_up) up_.reset();
  stop_.lost_contact();
}

bool AgentRestarts::report(ControlVerb verb) {
  if (coordinator_)
    coordinator_event(verb, nullptr);
  else if (up_)
    up_->send(verb, {attempt_});
  else
    return false;
  return true;
}

void AgentRestarts::broadcast(ControlVerb verb, const std::vector<std::uint32_t>& args) {
  for (auto& p : peers_) p->send(verb, args);
}

// Agent 0's view: `from` is a peer's link, nullptr for itself.
void AgentRestarts::coordinator_event(ControlVerb verb, ControlLink* from) {
  std::optional<RestartCoordinator::Peer> peer;
  if (from) peer = static_cast<RestartCoordinator::Peer>(from->fd());
  using Step = RestartCoordinator::Step;
  Step step = Step::None;
  if (verb == ControlVerb::Fail)
    step = coordination_.failed();
  else if (verb == ControlVerb::Done)
    step = coordination_.done(peer);
  else if (verb == ControlVerb::Stopped)
    step = coordination_.stopped(peer);
  switch (step) {
    case Step::None:
      return;
    case Step::StopAll:
      broadcast(ControlVerb::Stop, {attempt_});
      return stop_.stop_to_restart();
    case Step::ExitAll:
      broadcast(ControlVerb::Exit, {0});
      return stop_.finish(0);
    case Step::StartNext:
      return start_next_attempt();
  }
}

void AgentRestarts::start_next_attempt() {
  ++attempt_;
  // The agent store stays on its port, emptied for the new attempt before any
  // agent starts it: torch 1.x's env:// keys each attempt apart
  // (/worker/attempt_N), torch 2.x's does not (torchrun makes a fresh store per
  // round), so its workers would find the last attempt's gloo addresses.
  hooks_.empty_store();
  if (!job_.agent_store) master_port_ = pick_free_port(master_port_ + 1);
  broadcast(ControlVerb::Start, {attempt_, master_port_});
  hooks_.start_attempt();
}

// Without PMIx, ranks assume every agent runs agent 0's worker count: a
// HELLO that says otherwise stops the job (exit 2) before a rendezvous hangs.
void AgentRestarts::on_hello(ControlLink& link, const ControlMessage& m) {
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
  if (!mismatch || stop_.phase() == AgentPhase::Finished) return;
  say(*mismatch);
  broadcast(ControlVerb::Exit, {2});
  stop_.stop_for_good(2);
}

void AgentRestarts::tell_lost(int code) {
  const std::vector<std::uint32_t> args{static_cast<std::uint32_t>(code)};
  if (coordinator_)
    broadcast(ControlVerb::Lost, args);
  else if (up_)
    up_->send(ControlVerb::Lost, args);
}

void AgentRestarts::on_lost_elsewhere(int code) {
  if (stop_.phase() == AgentPhase::Finished) return;
  if (coordinator_) broadcast(ControlVerb::Lost, {static_cast<std::uint32_t>(code)});
  stop_.lost_elsewhere(code);
}

void AgentRestarts::handle_control(ControlLink& link, const ControlMessage& m) {
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
    if (stop_.phase() == AgentPhase::WaitingPeers)  // our workers had all succeeded
      up_->send(ControlVerb::Stopped, {attempt_});
    else
      stop_.begin_stop(SIGTERM, AgentPhase::Restarting);
  } else if (m.verb == ControlVerb::Start && m.args.size() == 2) {
    attempt_ = m.args[0];
    master_port_ = m.args[1];
    hooks_.start_attempt();
  } else if (m.verb == ControlVerb::Exit && !m.args.empty()) {
    stop_.finish(static_cast<int>(m.args[0]));
  }
}

}  // namespace wireup
