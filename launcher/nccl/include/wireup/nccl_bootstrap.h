/* NCCL communicator setup without a TCP store: rank 0's ncclUniqueId travels
 * through PMIx (see pmix_bootstrap.h for where that works). */
#ifndef WIREUP_NCCL_BOOTSTRAP_H
#define WIREUP_NCCL_BOOTSTRAP_H
#include <nccl.h>

#include "wireup/pmix_bootstrap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ncclCommInitRank over the whole PMIx job: rank and size from PMIx, the id
 * from rank 0. Select the GPU (cudaSetDevice) before calling. Errors other
 * than NCCL's are reported as ncclSystemError with a message on stderr. */
ncclResult_t wireup_nccl_comm_init(ncclComm_t* comm, int* rank, int* nranks);

#ifdef __cplusplus
}
#endif
#endif
