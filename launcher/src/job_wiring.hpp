#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "pmix/pmix_client.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_layout.hpp"
#include "wireup/launch_options.hpp"

namespace wireup {

// Everything a task learns before it starts any worker: where it sits in the
// job, rank 0's address, and (agent mode) which global ranks are its own.
// Facts: nothing changes them once the job is wired.
struct JobLayout {
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
  std::uint32_t master_port = 0;  // the first attempt's
  std::string run_id;
  std::uint64_t job_id = 0, step_id = 0;
  std::string control;       // rank 0's control endpoint (restarts, exec mode's fail-fast)
  int control_wait_s = 30;   // how long the others try to connect to it
  bool agent_store = false;  // --agent-store: agent 0 serves MASTER_ADDR:MASTER_PORT
  double pmix_init_ms = 0, fence_ms = 0;
};

// What a task holds open for the job: the PMIx client and the sockets rank 0
// bound before the fence. Closes what it still owns.
class JobConnections {
 public:
  JobConnections() = default;
  ~JobConnections();
  JobConnections(JobConnections&& other) noexcept;
  JobConnections& operator=(JobConnections&&) = delete;
  JobConnections(const JobConnections&) = delete;
  JobConnections& operator=(const JobConnections&) = delete;

  std::unique_ptr<PmixClient> pmix;  // kept by agents (abort), finalized in exec mode
  int control_listen_fd = -1;        // rank 0's control socket (when there is a control endpoint)
  int store_listen_fd = -1;          // agent 0's store socket (--agent-store)

  // Hands a socket over to a new owner (-1 when there is none).
  int take_store_listener();
  void close_control_listener();
};

struct Wiring {
  JobLayout layout;
  JobConnections conn;
};

// Reads the job from PMIx, else SLURM_*, else --standalone / torchrun's static
// flags; throws InputError (nothing identifies the job, bad layout) or
// PmixError. `nproc` is this node's worker count in agent mode, 1 otherwise.
Wiring wire_job(const LaunchOptions& o, bool agent_mode, std::uint32_t nproc);

// What every worker of the job shares (world, group, role, rendezvous, restart
// limit, run id); the caller adds the worker's own ranks and its mode's fields.
WorkerSpec job_worker_spec(const LaunchOptions& o, const JobLayout& job);

}  // namespace wireup
