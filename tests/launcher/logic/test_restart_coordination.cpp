// Agent 0's restart coordination: when every agent stops, restarts or exits together.
#include <catch2/catch.hpp>

#include "wireup/restart_coordination.hpp"

using namespace wireup;
using Step = RestartCoordinator::Step;

TEST_CASE("restart coordination: every agent done is an exit, once all have linked") {
  RestartCoordinator c(3);
  c.linked(10);
  CHECK(c.done(std::nullopt) == Step::None);
  CHECK(c.done(10) == Step::None);  // agent 2 has not linked yet
  c.linked(11);
  CHECK(c.done(11) == Step::ExitAll);
}

TEST_CASE("restart coordination: the first failure stops every agent, the last stop restarts") {
  RestartCoordinator c(3);
  c.linked(10);
  c.linked(11);
  CHECK(c.done(10) == Step::None);  // done before the failure: it stops too
  CHECK(c.failed() == Step::StopAll);
  CHECK(c.stop_sent());
  CHECK(c.failed() == Step::None);            // later failures of the attempt change nothing
  CHECK(c.done(std::nullopt) == Step::None);  // no exit once a stop was sent
  CHECK(c.stopped(10) == Step::None);
  CHECK(c.stopped(std::nullopt) == Step::None);
  CHECK(c.stopped(99) == Step::None);  // not a linked peer
  CHECK(c.stopped(11) == Step::StartNext);

  c.new_attempt();  // nothing said in the last attempt counts
  CHECK_FALSE(c.stop_sent());
  CHECK(c.done(10) == Step::None);
  CHECK(c.done(11) == Step::None);
  CHECK(c.done(std::nullopt) == Step::ExitAll);
}

TEST_CASE("restart coordination: a lost peer is no longer waited for, but is missed") {
  RestartCoordinator c(2);
  c.linked(10);
  c.lost(10);
  CHECK(c.done(std::nullopt) == Step::None);  // one agent short
  c.linked(12);
  CHECK(c.done(12) == Step::ExitAll);
}

TEST_CASE("restart coordination: a single agent decides alone") {
  RestartCoordinator c(1);
  CHECK(c.failed() == Step::StopAll);
  CHECK(c.stopped(std::nullopt) == Step::StartNext);
  c.new_attempt();
  CHECK(c.done(std::nullopt) == Step::ExitAll);
}
