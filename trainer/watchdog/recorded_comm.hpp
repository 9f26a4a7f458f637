#pragma once
#include <functional>

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

// Makes the groups; a stall while making them (an NCCL communicator whose
// peers never arrive, past --comm_init_timeout) ends the process the same
// way, the collective named `kind`. Installs the stalled-rank line as comm's
// stall reporter first (what NCCL's watch thread prints before it ends the
// process).
CommGroups started_groups(const WorldLayout& w, const char* kind,
                          const std::function<CommGroups()>& make);

}  // namespace wireup::train
