#include "wireup/launch_layout.hpp"

#include <algorithm>
#include <map>

#include "wireup/error.hpp"
#include "wireup/nodelist.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/slurm_env.hpp"
#include "wireup/text.hpp"

namespace wireup {

NodeGroups group_by_node(const std::vector<std::uint32_t>& ids) {
  NodeGroups g;
  std::map<std::uint32_t, std::uint32_t> index;
  for (auto id : ids) {
    auto [it, fresh] = index.try_emplace(id, g.count);
    if (fresh) ++g.count;
    g.group_of_rank.push_back(it->second);
  }
  return g;
}

RankOffsets rank_offsets(const std::vector<std::uint32_t>& nproc) {
  RankOffsets r;
  std::uint64_t sum = 0;
  for (auto n : nproc) {
    if (n == 0) throw InputError("rank offsets: an agent reported 0 workers");
    r.first_rank.push_back(static_cast<std::uint32_t>(sum));
    sum += n;
    if (sum > UINT32_MAX) throw InputError("rank offsets: more than 2^32 workers");
  }
  r.world_size = static_cast<std::uint32_t>(sum);
  return r;
}

std::uint32_t visible_gpu_count(const std::optional<std::string>& cvd, std::uint32_t found) {
  if (!cvd) return found;
  std::uint32_t n = 0;
  for (const auto& item : split(*cvd, ',')) {
    const auto t = trim(item);
    // CUDA stops at the first entry it cannot use; "-1" or "" hide everything.
    if (t.empty() || t[0] == '-') break;
    ++n;
  }
  return n;
}

std::uint32_t resolve_nproc(const std::string& spec, std::uint32_t gpus, std::uint32_t cpus) {
  if (spec == "gpu") {
    if (gpus == 0)
      throw InputError(
          "--nproc-per-node=gpu: no GPU is visible on this node "
          "(looked at CUDA_VISIBLE_DEVICES and /dev/nvidia*)");
    return gpus;
  }
  if (spec == "cpu") return std::max<std::uint32_t>(cpus, 1);
  if (spec == "auto") return gpus > 0 ? gpus : std::max<std::uint32_t>(cpus, 1);
  if (auto n = parse_uint(spec, 4096); n && *n > 0) return static_cast<std::uint32_t>(*n);
  throw InputError("--nproc-per-node: expected a number, 'gpu', 'cpu' or 'auto', got " +
                   quoted(spec));
}

void check_nnodes(const std::string& spec, std::uint32_t actual) {
  const auto parts = split(spec, ':');
  const auto lo = parse_uint(parts.front()).value_or(0);
  const auto hi = parse_uint(parts.back()).value_or(0);
  if (actual < lo || actual > hi)
    throw InputError("--nnodes=" + spec + ": the job has " + std::to_string(actual) + " node(s)" +
                     (parts.size() == 1 ? "" : ", outside that range"));
}

std::string encode_peer(const PeerRecord& p) {
  std::string s =
      "node=" + std::to_string(p.node_id) + ";nproc=" + std::to_string(p.nproc) + ";host=" + p.host;
  if (!p.master.empty()) s += ";master=" + p.master;
  if (!p.control.empty()) s += ";control=" + p.control;
  return s;
}

PeerRecord decode_peer(std::string_view text) {
  PeerRecord p;
  bool node = false, nproc = false;
  for (const auto& field : split(text, ';')) {
    const auto eq = field.find('=');
    const auto key = field.substr(0, eq);
    const auto val = eq == std::string::npos ? std::string() : field.substr(eq + 1);
    if (key == "node") {
      auto v = parse_uint(val, UINT32_MAX);
      if (!v) break;
      p.node_id = static_cast<std::uint32_t>(*v);
      node = true;
    } else if (key == "nproc") {
      auto v = parse_uint(val, 4096);
      if (!v || *v == 0) break;
      p.nproc = static_cast<std::uint32_t>(*v);
      nproc = true;
    } else if (key == "host") {
      p.host = val;
    } else if (key == "master") {
      p.master = val;
    } else if (key == "control") {
      p.control = val;
    }  // unknown keys: a newer launcher's, ignored
  }
  if (!node || !nproc)
    throw InputError("peer record from the PMIx exchange: expected node=ID;nproc=N;..., got " +
                     quoted(text));
  return p;
}

std::pair<std::string, std::uint32_t> split_endpoint(const std::string& what,
                                                     const std::string& ep) {
  const auto colon = ep.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError(what + ": expected ADDRESS:PORT, got " + quoted(ep));
  const auto port = parse_uint(ep.substr(colon + 1), 65535);
  if (!port || *port == 0) throw InputError(what + ": expected a port 1-65535 in " + quoted(ep));
  return {ep.substr(0, colon), static_cast<std::uint32_t>(*port)};
}

std::optional<JobIdentity> identity_from_slurm(const EnvLookup& env) {
  if (!env("SLURM_PROCID")) return std::nullopt;
  const SlurmTask t = task_from_slurm_env(env);  // names the first bad variable
  const auto& l = t.facts.layout;
  JobIdentity id;
  id.source = "slurm";
  id.rank = l.rank;
  id.size = l.world_size;
  id.local_rank = l.local_rank;
  id.local_size = l.local_world_size;
  id.node_rank = l.node_rank;
  id.num_nodes = l.num_nodes;
  id.job_id = t.facts.job_id;
  id.step_id = t.facts.step_id;
  id.run_id = std::to_string(id.job_id) + "." + std::to_string(id.step_id);

  // spank_wireup already chose the address; its choice is the step's.
  const auto ours = split(env(kInjectedVar).value_or(""), ' ');
  auto by_wireup = [&](const char* n) {
    return std::find(ours.begin(), ours.end(), n) != ours.end();
  };
  if (by_wireup("MASTER_ADDR") && by_wireup("MASTER_PORT")) {
    id.master_addr = env("MASTER_ADDR").value_or("");
    if (auto p = parse_uint(env("MASTER_PORT").value_or(""), 65535); p && *p > 0)
      id.master_port = static_cast<std::uint32_t>(*p);
  }
  if (id.master_addr.empty()) {
    // A name that does not encode its address is kept; the worker resolves it.
    id.master_addr = ipv4_from_host_name(t.first_node).value_or(t.first_node);
  }
  if (!id.master_port) id.master_port = derive_port(PortPolicy{}, id.job_id, id.step_id);
  return id;
}

std::string no_job_message() {
  return "wireup-launch: cannot tell which job this task belongs to: no PMIx server "
         "(PMIX_NAMESPACE is unset: not started by `srun --mpi=pmix` or `mpirun`) and no Slurm "
         "step (SLURM_PROCID is unset). Run it under `srun --mpi=pmix`, `srun` or `mpirun`, or "
         "pass --standalone for a single node.";
}

}  // namespace wireup
