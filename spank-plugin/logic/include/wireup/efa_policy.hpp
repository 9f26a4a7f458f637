#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "wireup/env_plan.hpp"
#include "wireup/host_facts.hpp"
#include "wireup/settings.hpp"

namespace wireup {

// What wireup knows about an EC2 instance type (docs/efa-nccl.md names the
// sources). Counts of 0 mean "not recorded".
struct InstanceInfo {
  std::string_view family;       // "p5", "p6-b200", "trn2"
  std::string_view size;         // "48xlarge"; "" matches every size of the family
  int accelerators = 0;          // GPUs or Trainium chips per instance
  std::string_view accelerator;  // "H100", "Trainium2", ...
  int efa_devices = 0;           // EFA devices (network cards with EFA) per instance
  bool gdr = false;  // EFA RDMA read with accelerator memory (aws-ofi-nccl gdr_required)
  bool shm_cuda_memcpy = false;  // NCCL_SHM_USE_CUDA_MEMCPY=1 helps (g5/g6 families)
};

// The table entry for "p5.48xlarge" or "ml.p5.48xlarge" (case-insensitive);
// nullptr for a type the table does not hold.
const InstanceInfo* instance_info(std::string_view instance_type);

// GPUDirect RDMA (EFA RDMA read) per aws-ofi-nccl's platform table: p4d,
// p4de, p5 (not p5.4xlarge), p5e, p5en, p6 and later p-series, trn*.
bool gdr_capable(std::string_view instance_type);

// g5/g6/g6e: NCCL's shared-memory transport should copy with cudaMemcpy.
bool wants_shm_cuda_memcpy(std::string_view instance_type);

struct EfaPlan {
  std::vector<EnvEntry> entries;
  std::vector<std::string> notes;  // why something was left out
};

// The EFA/libfabric/NCCL variables this node needs, given the installed
// aws-ofi-nccl's version and libfabric's (docs/efa-nccl.md has the table).
// Throws InputError when mode is On and the node cannot do EFA.
EfaPlan plan_efa(EfaMode mode, const HostFacts& host);

}  // namespace wireup
