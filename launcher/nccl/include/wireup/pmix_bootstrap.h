/* Out-of-band bootstrap through PMIx, for programs started by
 * `srun --mpi=pmix` or by `wireup-launch` in exec mode (which finalizes its
 * own PMIx session before exec, so the program may init PMIx as the same
 * process). Workers of an agent have no PMIx identity and cannot use it. */
#ifndef WIREUP_PMIX_BOOTSTRAP_H
#define WIREUP_PMIX_BOOTSTRAP_H
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PMIx rank and job size; initializes PMIx on first use. 0 on success. */
int wireup_pmix_rank(int* rank, int* size);

/* Every rank gets root's `size` bytes in `buf`: put, commit, fence with
 * collect, get. Collective: every rank must call it the same number of times.
 * 0 on success; otherwise -1 and a message in err (if errlen > 0). */
int wireup_pmix_broadcast(void* buf, size_t size, int root, char* err, size_t errlen);

/* Finalizes the PMIx session opened by the calls above (idempotent). */
void wireup_pmix_finalize(void);

#ifdef __cplusplus
}
#endif
#endif
