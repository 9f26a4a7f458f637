#include "job_wiring.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

#include "net.hpp"
#include "wireup/control_endpoint.hpp"
#include "wireup/error.hpp"
#include "wireup/master_addr.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/text.hpp"

namespace wireup {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::optional<std::string> getenv_opt(const std::string& k) {
  const char* v = std::getenv(k.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

constexpr const char* kPeerKey = "wireup.launch.peer";

int fence_timeout_s() {
  const auto v = parse_uint(getenv_opt("WIREUP_FENCE_TIMEOUT").value_or(""), 86400);
  return v ? static_cast<int>(*v) : 600;
}

int listen_store(std::uint32_t& port, bool exact) {
  try {
    return listen_any(port, exact ? 1 : 64);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("--agent-store: ") + e.what() +
                             (exact ? " (--master-port)" : " (pass --master-port)"));
  }
}

void apply_master_overrides(const LaunchOptions& o, JobLayout& job) {
  if (o.master_addr) job.master_addr = *o.master_addr;
  if (o.master_port) job.master_port = *o.master_port;
}

// Rank 0's record: where MASTER_ADDR:MASTER_PORT is, and the control endpoint.
// Binds what must stay bound until the workers use it.
void listen_as_rank_0(const LaunchOptions& o, bool agent_mode, Wiring& w, PeerRecord& me) {
  const JobLayout& job = w.layout;
  const std::string addr = o.master_addr.value_or(choose_ipv4(o.local_addr, job.host));
  std::uint32_t port;
  if (agent_mode && o.agent_store) {
    // Bound now and held, so the port published is this store's.
    port = o.master_port.value_or(derive_port(PortPolicy{}, job.job_id, job.step_id));
    w.conn.store_listen_fd = listen_store(port, o.master_port.has_value());
  } else {
    port =
        o.master_port.value_or(pick_free_port(derive_port(PortPolicy{}, job.job_id, job.step_id)));
  }
  me.master = addr + ":" + std::to_string(port);
  // Agent 0 coordinates restarts; exec mode's rank 0 stops every rank when one fails.
  if ((!agent_mode || o.max_restarts > 0) && job.task_count > 1) {
    std::uint32_t cport = 0;
    const std::string caddr = choose_ipv4(o.local_addr, job.host);
    w.conn.control_listen_fd = listen_tcp(caddr, cport);
    me.control = caddr + ":" + std::to_string(cport);
  }
}

// The ranks every task's record gives: node groups, rank 0's endpoints, and
// (agent mode) the global ranks of this agent's workers.
void place_in_job(const LaunchOptions& o, bool agent_mode, std::uint32_t nproc,
                  const std::vector<PeerRecord>& records, JobLayout& job) {
  std::vector<std::uint32_t> node_ids, nprocs;
  for (const auto& r : records) {
    node_ids.push_back(r.node_id);
    nprocs.push_back(r.nproc);
  }
  const NodeGroups groups = group_by_node(node_ids);
  if (o.nnodes) check_nnodes(*o.nnodes, groups.count);
  const auto [maddr, mport] = split_endpoint("rank 0's published address", records[0].master);
  job.master_addr = maddr;
  job.master_port = mport;
  job.control = records[0].control;
  job.agent_store = agent_mode && o.agent_store;
  if (agent_mode) {
    // Each agent is one group, torchrun-style; ranks follow agent order.
    const RankOffsets off = rank_offsets(nprocs);
    job.group_rank = job.task_rank;
    job.group_count = job.task_count;
    job.first_rank = off.first_rank[job.task_rank];
    job.world_size = off.world_size;
    job.nproc = nproc;
  } else {
    job.group_rank = groups.group_of_rank[job.task_rank];
    job.group_count = groups.count;
    job.first_rank = job.task_rank;
    job.world_size = job.task_count;
  }
}

Wiring from_pmix(const LaunchOptions& o, bool agent_mode, std::uint32_t nproc) {
  Wiring w;
  JobLayout& job = w.layout;
  job.source = "pmix";
  auto t0 = Clock::now();
  w.conn.pmix = std::make_unique<PmixClient>();
  job.pmix_init_ms = ms_since(t0);
  PmixClient& p = *w.conn.pmix;
  job.task_rank = p.rank();
  job.task_count = p.job_size();
  job.local_rank = p.local_rank();
  job.local_size = p.local_size();
  job.host = p.hostname().value_or(local_host_name());

  // Slurm's ids give the port slot; mpirun has only the namespace.
  const auto slurm_job = parse_uint(getenv_opt("SLURM_JOB_ID").value_or(""), UINT32_MAX);
  const auto step = parse_uint(getenv_opt("SLURM_STEP_ID").value_or(""), UINT32_MAX);
  job.job_id = slurm_job ? *slurm_job : std::hash<std::string>{}(p.nspace()) % 1000003;
  job.step_id = step.value_or(0);
  job.run_id = !o.run_id.empty() ? o.run_id
               : slurm_job       ? std::to_string(*slurm_job) + "." + std::to_string(job.step_id)
                                 : p.nspace();

  PeerRecord me{p.node_id(), nproc, job.host, "", ""};
  if (job.task_rank == 0) listen_as_rank_0(o, agent_mode, w, me);
  t0 = Clock::now();
  p.put(kPeerKey, encode_peer(me));
  p.commit();
  const int timeout_s = fence_timeout_s();
  p.fence_collect(timeout_s);
  job.fence_ms = ms_since(t0);

  std::vector<PeerRecord> records;
  for (std::uint32_t r = 0; r < job.task_count; ++r)
    records.push_back(r == job.task_rank ? me : decode_peer(p.get(r, kPeerKey, timeout_s)));
  // No rank exits (or finalizes) while another still reads its record.
  p.barrier(timeout_s);
  place_in_job(o, agent_mode, nproc, records, job);
  return w;
}

// --max-restarts across agents without PMIx: agent 0 listens at a port every
// agent derives from MASTER_PORT, on every address of the step's first node,
// whose IPv4 address (id.master_addr, settled before --master-addr applies)
// the others connect to.
void control_without_pmix(const LaunchOptions& o, const JobIdentity& id, Wiring& w) {
  JobLayout& job = w.layout;
  if (id.source != "slurm")
    throw InputError(
        "--max-restarts with several agents needs PMIx (srun --mpi=pmix, mpirun) or a Slurm "
        "step (srun) to coordinate them; found a " +
        id.source + " job of " + std::to_string(id.size) + " tasks");
  std::uint32_t port = o.control_port.value_or(control_port_for(job.master_port));
  job.control_wait_s = fence_timeout_s();
  if (job.task_rank == 0) {
    try {
      w.conn.control_listen_fd = listen_any(port, 1);
    } catch (const std::exception& e) {
      throw std::runtime_error(std::string("--max-restarts: agent 0's control port: ") + e.what() +
                               (o.control_port
                                    ? " (--control-port)"
                                    : " (MASTER_PORT+" + std::to_string(kControlPortOffset) +
                                          "; pass --control-port=PORT to every node)"));
    }
  }
  job.control = id.master_addr + ":" + std::to_string(port);
}

Wiring from_identity(const LaunchOptions& o, const JobIdentity& id, bool agent_mode,
                     std::uint32_t nproc) {
  Wiring w;
  JobLayout& job = w.layout;
  job.source = id.source;
  job.task_rank = id.rank;
  job.task_count = id.size;
  job.local_rank = id.local_rank;
  job.local_size = id.local_size;
  job.host = local_host_name();
  job.job_id = id.job_id;
  job.step_id = id.step_id;
  job.run_id = !o.run_id.empty() ? o.run_id : id.run_id;
  job.master_addr = id.master_addr;
  job.master_port = id.master_port.value_or(0);
  if (o.nnodes) check_nnodes(*o.nnodes, id.num_nodes);
  if (agent_mode && o.agent_store) {
    // Only PMIx tells every agent where agent 0's store listens; alone, we know.
    if (id.source != "standalone")
      throw InputError(
          "--agent-store needs PMIx (srun --mpi=pmix, mpirun) or --standalone; "
          "found a " +
          id.source + " job, where agent 0 may not be at MASTER_ADDR");
    job.agent_store = true;
  }
  if (agent_mode) {
    // No exchange: every agent must run the same number of workers.
    job.group_rank = id.rank;
    job.group_count = id.size;
    job.first_rank = id.rank * nproc;
    job.world_size = id.size * nproc;
    job.nproc = nproc;
  } else {
    job.group_rank = id.node_rank;
    job.group_count = id.num_nodes;
    job.first_rank = id.rank;
    job.world_size = id.size;
  }
  apply_master_overrides(o, job);
  if (agent_mode && o.max_restarts > 0 && id.size > 1) control_without_pmix(o, id, w);
  if (job.agent_store)
    w.conn.store_listen_fd = listen_store(job.master_port, o.master_port.has_value());
  return w;
}

// SLURM_* mode: the first node's name becomes an IPv4 literal here, by the
// plugin's rules (name, resolver, the node's slurm.conf NodeAddr), so a name
// known only to Slurm still wires, and a name nobody knows fails before launch.
// Restarts across agents need the node's address even with --master-addr
// (agent 0 listens there): `needed` resolves it regardless.
void settle_master_addr(const LaunchOptions& o, JobIdentity& id, bool needed) {
  if ((o.master_addr && !needed) || is_ipv4_literal(id.master_addr)) return;
  const std::string node = id.master_addr;
  const MasterAddr m =
      resolve_master_addr(node, system_node_ipv4(node, getenv_opt("SLURM_CONF")), std::nullopt,
                          o.master_addr ? "--max-restarts without PMIx connects "
                                          "to agent 0 at the first node's address"
                                        : "pass --master-addr=IPV4");
  id.master_addr = m.ipv4;
  if (o.verbose)
    std::fprintf(stderr, "wireup-launch: MASTER_ADDR %s for node %s, from %s\n", m.ipv4.c_str(),
                 node.c_str(), m.source.c_str());
}

}  // namespace

Wiring wire_job(const LaunchOptions& o, bool agent_mode, std::uint32_t nproc) {
  if (!o.standalone && PmixClient::server_present()) return from_pmix(o, agent_mode, nproc);

  const EnvLookup env = getenv_opt;
  if (!o.standalone) {
    if (auto id = identity_from_slurm(env)) {
      settle_master_addr(o, *id, agent_mode && o.max_restarts > 0 && id->size > 1);
      return from_identity(o, *id, agent_mode, nproc);
    }
  }
  JobIdentity id;
  if (o.standalone) {
    id.source = "standalone";
  } else if (o.node_rank && o.nnodes && o.master_addr && o.master_port && agent_mode) {
    // torchrun's static rendezvous: every node is told its place.
    id.source = "static";
    id.rank = *o.node_rank;
    id.size = static_cast<std::uint32_t>(parse_uint(split(*o.nnodes, ':').back()).value_or(1));
    id.num_nodes = id.size;
    id.node_rank = id.rank;
    if (id.rank >= id.size)
      throw InputError("--node-rank=" + std::to_string(id.rank) +
                       " is not below --nnodes=" + *o.nnodes);
  } else {
    throw InputError(no_job_message());
  }
  id.run_id = "none";
  id.master_addr = "127.0.0.1";
  if (!o.master_port)
    id.master_port =
        pick_free_port(derive_port(PortPolicy{}, static_cast<std::uint64_t>(getpid()), 0));
  return from_identity(o, id, agent_mode, nproc);
}

WorkerSpec job_worker_spec(const LaunchOptions& o, const JobLayout& job) {
  WorkerSpec spec;
  spec.world_size = job.world_size;
  spec.group_rank = job.group_rank;
  spec.group_world_size = job.group_count;
  spec.role = o.role;
  spec.master_addr = job.master_addr;
  spec.master_port = job.master_port;
  spec.max_restarts = o.max_restarts;
  spec.run_id = job.run_id;
  return spec;
}

JobConnections::~JobConnections() {
  if (control_listen_fd >= 0) close(control_listen_fd);
  if (store_listen_fd >= 0) close(store_listen_fd);
}

JobConnections::JobConnections(JobConnections&& other) noexcept
    : pmix(std::move(other.pmix)),
      control_listen_fd(std::exchange(other.control_listen_fd, -1)),
      store_listen_fd(std::exchange(other.store_listen_fd, -1)) {}

int JobConnections::take_store_listener() { return std::exchange(store_listen_fd, -1); }

void JobConnections::close_control_listener() {
  if (control_listen_fd >= 0) close(control_listen_fd);
  control_listen_fd = -1;
}

}  // namespace wireup
