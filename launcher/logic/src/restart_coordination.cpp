#include "wireup/restart_coordination.hpp"

namespace wireup {

void RestartCoordinator::new_attempt() {
  self_ = {};
  for (auto& [peer, said] : peers_) said = {};
  stop_sent_ = false;
}

bool RestartCoordinator::every_peer(bool Said::*what) const {
  if (peers_.size() + 1 < agents_) return false;  // someone has not linked yet
  for (const auto& [peer, said] : peers_)
    if (!(said.*what)) return false;
  return true;
}

RestartCoordinator::Step RestartCoordinator::next() const {
  if (self_.done && !stop_sent_ && every_peer(&Said::done)) return Step::ExitAll;
  if (stop_sent_ && self_.stopped && every_peer(&Said::stopped)) return Step::StartNext;
  return Step::None;
}

RestartCoordinator::Step RestartCoordinator::failed() {
  if (stop_sent_) return Step::None;
  stop_sent_ = true;
  return Step::StopAll;
}

RestartCoordinator::Step RestartCoordinator::heard(std::optional<Peer> from, bool Said::*what) {
  if (!from)
    self_.*what = true;
  else if (const auto it = peers_.find(*from); it != peers_.end())
    it->second.*what = true;
  return next();
}

RestartCoordinator::Step RestartCoordinator::done(std::optional<Peer> from) {
  return heard(from, &Said::done);
}

RestartCoordinator::Step RestartCoordinator::stopped(std::optional<Peer> from) {
  return heard(from, &Said::stopped);
}

}  // namespace wireup
