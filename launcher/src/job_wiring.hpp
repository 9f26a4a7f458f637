#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "pmix_client.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_layout.hpp"
#include "wireup/launch_options.hpp"

namespace wireup {

// Everything a task learns before it starts any worker: where it sits in the
// job, rank 0's address, and (agent mode) which global ranks are its own.
struct Wiring {
  std::string source;           // "pmix", "slurm", "standalone", "static"
  std::uint32_t task_rank = 0;  // this launcher's rank among the launchers
  std::uint32_t task_count = 1;
  std::uint32_t local_rank = 0;  // exec mode: the worker's LOCAL_RANK
  std::uint32_t local_size = 1;
  std::uint32_t group_rank = 0;   // GROUP_RANK
  std::uint32_t group_count = 1;  // GROUP_WORLD_SIZE
  std::uint32_t first_rank = 0;   // agent mode: global rank of local worker 0
  std::uint32_t world_size = 1;   // WORLD_SIZE
  std::uint32_t nproc = 1;        // workers this launcher runs (1 in exec mode)
  std::string host;
  std::string master_addr;
  std::uint32_t master_port = 0;
  std::string run_id;
  std::uint64_t job_id = 0, step_id = 0;
  std::string control;               // agent 0's coordination endpoint (restarts)
  int control_listen_fd = -1;        // open on agent 0 only
  bool agent_store = false;          // --agent-store: agent 0 serves MASTER_ADDR:MASTER_PORT
  int store_listen_fd = -1;          // agent 0's listening store socket (bound before the fence)
  std::unique_ptr<PmixClient> pmix;  // kept by agents (abort), finalized in exec mode
  double pmix_init_ms = 0, fence_ms = 0;
};

// Reads the job from PMIx, else SLURM_*, else --standalone / torchrun's static
// flags; throws InputError (nothing identifies the job, bad layout) or
// PmixError. `nproc` is this node's worker count in agent mode, 1 otherwise.
Wiring wire_job(const LaunchOptions& o, bool agent_mode, std::uint32_t nproc);

// What every worker of the job shares (world, group, role, rendezvous, restart
// limit, run id); the caller adds the worker's own ranks and its mode's fields.
WorkerSpec job_worker_spec(const LaunchOptions& o, const Wiring& w);

}  // namespace wireup
