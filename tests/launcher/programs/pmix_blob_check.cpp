// Under srun --mpi=pmix, mpirun or wireup-launch's exec mode: rank 0's opaque
// 128-byte blob (an ncclUniqueId's size) reaches every rank intact, twice,
// from two different roots, through wireup_pmix_broadcast. It also reports
// whether it inherited a PMIx connection (wireup-launch's exec mode keeps
// its finalized one open until the task exits: pmix_handoff.hpp).
#include <cstdio>
#include <cstring>

#include "pmix/pmix_socket.hpp"
#include "wireup/pmix_bootstrap.h"

static void pattern(unsigned char* b, int n, int seed) {
  for (int i = 0; i < n; ++i) b[i] = static_cast<unsigned char>((i * 37 + seed) & 0xff);
}

int main() {
  const bool inherited = wireup::find_pmix_server_socket() >= 0;  // before PMIx_Init opens one
  int rank = -1, size = 0;
  if (wireup_pmix_rank(&rank, &size) != 0) return 2;
  char err[256];
  for (int round = 0; round < 2; ++round) {
    const int root = round == 0 ? 0 : size - 1;
    unsigned char blob[128], want[128];
    pattern(want, 128, 11 + round);
    if (rank == root)
      std::memcpy(blob, want, 128);
    else
      std::memset(blob, 0, 128);
    if (wireup_pmix_broadcast(blob, sizeof blob, root, err, sizeof err) != 0) {
      std::fprintf(stderr, "rank %d: %s\n", rank, err);
      return 1;
    }
    if (std::memcmp(blob, want, 128) != 0) {
      std::fprintf(stderr, "rank %d: blob from root %d differs\n", rank, root);
      return 1;
    }
  }
  unsigned char one[4] = {};
  const bool refused = wireup_pmix_broadcast(one, sizeof one, size, err, sizeof err) != 0;
  wireup_pmix_finalize();
  std::printf("BLOB rank=%d size=%d ok refused_bad_root=%d inherited=%d\n", rank, size,
              refused ? 1 : 0, inherited ? 1 : 0);
  return refused ? 0 : 1;
}
