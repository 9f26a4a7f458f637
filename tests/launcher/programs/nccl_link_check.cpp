// Proves wireup_nccl_bootstrap links and loads against the NCCL found; runs
// nothing that needs a GPU.
#include <cstdio>

#include "wireup/nccl_bootstrap.h"

int main() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return 1;
  // Taking the address keeps the symbol referenced, so the link is checked.
  auto* init = &wireup_nccl_comm_init;
  std::printf("NCCL %d, wireup_nccl_comm_init at %p\n", version, reinterpret_cast<void*>(init));
  return version > 0 ? 0 : 1;
}
