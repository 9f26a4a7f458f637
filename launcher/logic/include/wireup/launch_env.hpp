#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

// One worker's place and the run it belongs to, in torchrun's vocabulary.
struct WorkerSpec {
  std::uint32_t rank = 0;              // RANK, ROLE_RANK (one role)
  std::uint32_t local_rank = 0;        // LOCAL_RANK
  std::uint32_t world_size = 1;        // WORLD_SIZE, ROLE_WORLD_SIZE
  std::uint32_t local_world_size = 1;  // LOCAL_WORLD_SIZE
  std::uint32_t group_rank = 0;        // GROUP_RANK: this node's (agent's) index
  std::uint32_t group_world_size = 1;  // GROUP_WORLD_SIZE
  std::string role = "default";
  std::string master_addr;
  std::uint32_t master_port = 0;
  std::uint32_t restart_count = 0;
  std::uint32_t max_restarts = 0;
  std::string run_id = "none";
  std::string error_file;   // TORCHELASTIC_ERROR_FILE ("" = unset)
  std::string stop_reason;  // WIREUP_LAUNCH_STOP_REASON's file ("" = unset; wireup/stop_reason.hpp)
  // TORCHELASTIC_USE_AGENT_STORE: True when agent 0 serves the TCPStore at
  // MASTER_ADDR:MASTER_PORT (every rank a client), False when rank 0 hosts it.
  bool agent_store = false;
  // Exec mode: the program is the task itself, so it keeps the PMIx/MPI
  // identity (and may re-init PMIx once the launcher has finalized).
  bool keep_task_identity = false;
};

// Variables a worker must not inherit: the launcher's own PMIx and MPI
// identity (a worker that re-inits PMIx as the agent breaks the agent's fences).
bool inherited_identity_var(std::string_view name);

// The worker's whole environment ("NAME=VALUE"): `base` without the launcher's
// identity, with the torchrun set forced, TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and
// OMP_NUM_THREADS=1 (more than one worker per node) kept when the user set them.
// Throws InputError for a spec no worker could use.
std::vector<std::string> build_worker_env(const WorkerSpec& w,
                                          const std::vector<std::string>& base);

}  // namespace wireup
