#include "comm/comm_nccl.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

bool nccl_available() { return false; }

CommGroups make_nccl_groups(const WorldLayout&, Sharding) {
  throw InputError("this wireup-train was built without NCCL (CPU LibTorch): GPU training "
                   "needs the CUDA LibTorch build (see docs/trainer.md)");
}

}  // namespace wireup::train
