#pragma once
#include <c10/util/intrusive_ptr.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace c10d {
class Store;
}

namespace wireup::train {

// The job's TCPStore at MASTER_ADDR:MASTER_PORT: served by rank 0, unless the
// launcher serves it already (TORCHELASTIC_USE_AGENT_STORE=True, as torchrun
// and wireup-launch --agent-store set), then every rank is a client. Both
// backends rendezvous through it.
// Its client timeout (a get() of a key nobody set) is collective_timeout() at
// the time it opens: --comm_init_timeout.
c10::intrusive_ptr<c10d::Store> open_job_store(const WorldLayout& w);
// The process's own job store: opened (open_job_store) by the first call and
// kept for the process's lifetime, so that rank 0 serves every group made
// later (the memory snapshots' peer group) on every backend.
c10::intrusive_ptr<c10d::Store> shared_job_store(const WorldLayout& w);

// Who of a group has not reached its collective number `n` (1, 2, ...
// counted per group) after this rank timed out in it: this rank writes `n`
// under PREFIX + RANK; the live ranks stuck in the same collective time out
// too and do the same; a rank that has not written at least `n` within
// `grace` has not arrived. Only a timeout talks to the store: nothing is
// published per collective. A store that stops answering during the grace
// (its server, rank 0, timed out too and exited) leaves the last complete
// look's list; one that never answers (its server stalled or gone) gives an
// empty list. Gloo and NCCL both name the missing ranks this way.
std::vector<int> ranks_not_at(c10d::Store& store, const std::string& prefix, int rank, int size,
                              std::uint64_t n, std::chrono::milliseconds grace);

// The grace ranks_not_at waits for the others: min(collective_timeout(), 10 s).
std::chrono::milliseconds not_arrived_grace();

}  // namespace wireup::train
