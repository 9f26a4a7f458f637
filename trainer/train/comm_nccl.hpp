#pragma once
#include "comm.hpp"
#include "comm_gloo.hpp"

namespace wireup::train {

// NCCL groups for GPU training (CUDA LibTorch): the world communicator from
// the launcher's PMIx bootstrap when this process has a PMIx identity
// (srun --mpi=pmix wireup-launch exec mode), else rank 0's ncclUniqueId
// through the TCPStore at MASTER_ADDR:MASTER_PORT; sub-groups for hybrid
// sharding the same way. Collectives run on one NCCL stream.
CommGroups make_nccl_groups(const WorldLayout& w, Sharding sharding);

// False in builds without NCCL (make_nccl_groups then throws InputError).
bool nccl_available();

}  // namespace wireup::train
