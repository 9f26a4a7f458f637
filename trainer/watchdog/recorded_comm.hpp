#pragma once
#include "comm/comm.hpp"
#include "config/sharding.hpp"

// Every collective of the trainer's groups through the flight recorder
// (flight_recorder.hpp): recorded when it starts and when its wait ends. A
// collective whose backend gives up waiting (PeerStalled) ends the process:
// one line naming the collective and the ranks that did not arrive, the
// flight record as JSON, exit status kExitPeerStalled (docs/reliability.md).
namespace wireup::train {

// The same groups, recorded; groups of one rank stay as they are.
CommGroups recorded_groups(const CommGroups& g, const WorldLayout& w, Sharding sharding);

}  // namespace wireup::train
