#pragma once
#include "comm/comm.hpp"

#include <c10/util/intrusive_ptr.h>

#include <memory>
#include <string>

namespace c10d {
class Store;
}

namespace wireup::train {

// NCCL groups for GPU training (CUDA LibTorch): the world communicator from
// the launcher's PMIx bootstrap when this process has a PMIx identity
// (srun --mpi=pmix wireup-launch exec mode), else rank 0's ncclUniqueId
// through the TCPStore at MASTER_ADDR:MASTER_PORT; sub-groups for hybrid
// sharding the same way. Collectives run on one NCCL stream. Communicators
// are non-blocking and watched: none waits past collective_timeout()
// (--comm_init_timeout, --comm_timeout); then it is aborted and the rank ends
// as a stalled one (PeerStalled, docs/reliability.md).
CommGroups make_nccl_groups(const WorldLayout& w, Sharding sharding);

// False in builds without NCCL (make_nccl_groups then throws InputError).
bool nccl_available();

// One NCCL communicator through the store, even of one rank (make_nccl_groups
// uses a solo group there): how the GPU check reaches NCCL on a single GPU.
std::shared_ptr<Comm> make_nccl_comm(const c10::intrusive_ptr<c10d::Store>& store,
                                     const std::string& key, int rank, int size);

}  // namespace wireup::train
