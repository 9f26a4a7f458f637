#pragma once
// Agent mode's --max-restarts across agents: agent 0 hears FAIL, DONE and
// STOPPED from every agent (itself included) over the control links and
// decides when every agent stops, restarts or exits together (see
// docs/launcher-agent.md, "Restarts without PMIx").
#include <cstdint>
#include <map>
#include <optional>

namespace wireup {

// Agent 0's bookkeeping for one attempt. A peer is one other agent's control
// link, named by a number the agent chooses; nullopt is agent 0 itself.
class RestartCoordinator {
 public:
  using Peer = std::uint64_t;

  // What agent 0 does next.
  enum class Step {
    None,
    StopAll,    // send STOP, and stop this node's workers to restart
    ExitAll,    // send EXIT 0, and exit 0: every agent's workers succeeded
    StartNext,  // every agent stopped: send START for the next attempt, and start it
  };

  // `agents`: how many agents the job has, agent 0 included.
  explicit RestartCoordinator(std::uint32_t agents) : agents_(agents) {}

  void linked(Peer p) { peers_[p] = {}; }  // a peer's link was accepted
  void lost(Peer p) { peers_.erase(p); }   // a peer's link closed
  void new_attempt();                      // what every agent said is forgotten

  // An agent's workers failed (the first failure of an attempt stops all).
  Step failed();
  // Every worker of an agent succeeded.
  Step done(std::optional<Peer> from);
  // An agent's workers stopped after a STOP.
  Step stopped(std::optional<Peer> from);

  bool stop_sent() const { return stop_sent_; }

 private:
  struct Said {
    bool done = false, stopped = false;
  };
  bool every_peer(bool Said::*what) const;
  Step heard(std::optional<Peer> from, bool Said::*what);  // marks it said, then next()
  Step next() const;

  std::uint32_t agents_;
  std::map<Peer, Said> peers_;
  Said self_;
  bool stop_sent_ = false;
};

}  // namespace wireup
