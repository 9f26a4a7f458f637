#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/env_plan.hpp"

namespace wireup {

// Node groups from each rank's node id. Ids need not be 0..N-1 (mpirun gives
// 1 and 2): groups are numbered in order of first appearance by rank, so the
// node of rank 0 is always group 0.
struct NodeGroups {
  std::vector<std::uint32_t> group_of_rank;
  std::uint32_t count = 0;
};
NodeGroups group_by_node(const std::vector<std::uint32_t>& node_id_by_rank);

// Agent mode: agent g runs nproc[g] workers, whose global ranks start at the
// sum of the lower agents' counts (torchrun: sum of lower groups' local sizes).
struct RankOffsets {
  std::vector<std::uint32_t> first_rank;  // per agent
  std::uint32_t world_size = 0;
};
RankOffsets rank_offsets(const std::vector<std::uint32_t>& nproc_by_agent);

// Visible GPUs: CUDA_VISIBLE_DEVICES when set (entries up to the first
// invalid one, as CUDA reads it), else the devices found.
std::uint32_t visible_gpu_count(const std::optional<std::string>& cuda_visible_devices,
                                std::uint32_t devices_found);

// "4" -> 4; "gpu" -> gpus (error when 0); "cpu" -> cpus; "auto" -> gpus or cpus.
std::uint32_t resolve_nproc(const std::string& spec, std::uint32_t gpus, std::uint32_t cpus);

// --nnodes=N or MIN:MAX against the nodes the job really has.
void check_nnodes(const std::string& spec, std::uint32_t actual);

// What every task publishes in the PMIx exchange, as one short text value.
struct PeerRecord {
  std::uint32_t node_id = 0;
  std::uint32_t nproc = 1;  // workers this task runs (1 in exec mode)
  std::string host;
  std::string master;   // "addr:port", rank 0 only
  std::string control;  // "addr:port", agent 0 only, for restarts
};
std::string encode_peer(const PeerRecord& p);
PeerRecord decode_peer(std::string_view text);  // throws InputError

// "10.0.0.1:29500" -> {addr, port}. Throws InputError naming `what`.
std::pair<std::string, std::uint32_t> split_endpoint(const std::string& what,
                                                     const std::string& endpoint);

// A task's place in the job, wherever it came from.
struct JobIdentity {
  std::string source;      // "pmix", "slurm", "standalone": shown in errors
  std::uint32_t rank = 0;  // of this task (agent rank in agent mode)
  std::uint32_t size = 1;  // tasks in the job/step
  std::uint32_t local_rank = 0;
  std::uint32_t local_size = 1;
  std::uint32_t node_rank = 0;
  std::uint32_t num_nodes = 1;
  std::string master_addr;  // may be empty until the exchange
  std::optional<std::uint32_t> master_port;
  std::string run_id;        // TORCHELASTIC_RUN_ID default
  std::uint64_t job_id = 0;  // for the port slot
  std::uint64_t step_id = 0;
};

// From the srun task variables (task_from_slurm_env), with MASTER_ADDR/PORT
// taken from spank_wireup when it set them, else the step's first node and the
// derived port. nullopt when SLURM_PROCID is unset; InputError when the set is
// partial or inconsistent, naming the variable.
std::optional<JobIdentity> identity_from_slurm(const EnvLookup& env);

// The error shown when nothing says which job this is.
std::string no_job_message();

}  // namespace wireup
