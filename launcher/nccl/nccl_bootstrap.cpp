#include "wireup/nccl_bootstrap.h"

#include <cstdio>

extern "C" ncclResult_t wireup_nccl_comm_init(ncclComm_t* comm, int* rank, int* nranks) {
  if (wireup_pmix_rank(rank, nranks) != 0) return ncclSystemError;
  ncclUniqueId id{};
  static_assert(sizeof id == 128, "ncclUniqueId is NCCL_UNIQUE_ID_BYTES (128)");
  if (*rank == 0) {
    const ncclResult_t r = ncclGetUniqueId(&id);
    if (r != ncclSuccess) return r;
  }
  char err[256];
  if (wireup_pmix_broadcast(&id, sizeof id, 0, err, sizeof err) != 0) {
    std::fprintf(stderr, "wireup_nccl_comm_init: %s\n", err);
    return ncclSystemError;
  }
  return ncclCommInitRank(comm, *nranks, id, *rank);
}
