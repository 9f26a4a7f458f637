#pragma once
#include <c10/util/intrusive_ptr.h>

#include "comm/comm.hpp"

namespace c10d {
class Store;
}

namespace wireup::train {

// The job's TCPStore at MASTER_ADDR:MASTER_PORT: served by rank 0, unless the
// launcher serves it already (TORCHELASTIC_USE_AGENT_STORE=True, as torchrun
// and wireup-launch --agent-store set), then every rank is a client. Both
// backends rendezvous through it.
c10::intrusive_ptr<c10d::Store> open_job_store(const WorldLayout& w);

}  // namespace wireup::train
