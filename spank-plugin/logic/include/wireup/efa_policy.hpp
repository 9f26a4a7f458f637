#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "wireup/env_plan.hpp"
#include "wireup/host_facts.hpp"
#include "wireup/settings.hpp"

namespace wireup {

// GPUDirect RDMA (EFA RDMA read) per aws-ofi-nccl's platform table.
bool gdr_capable(std::string_view instance_type);

// g5/g6: NCCL's shared-memory transport should copy with cudaMemcpy.
bool wants_shm_cuda_memcpy(std::string_view instance_type);

struct EfaPlan {
  std::vector<EnvEntry> entries;
  std::vector<std::string> notes;  // why something was left out
};

// Throws InputError when mode is On and the node cannot do EFA.
EfaPlan plan_efa(EfaMode mode, const HostFacts& host);

}  // namespace wireup
