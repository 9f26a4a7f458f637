// wireup's own wiring work per task, as a function of the node count: the pure logic each
// wiring path runs for one task, timed in this process with nothing else around it. On a
// real cluster this is all of wireup's per-task cost next to Slurm's task start and PMIx's
// fence (which bench/launcher/scale_bench.sh times end to end on emulated nodes, where all
// nodes share the machine's cores).
//
//   wireup-bench-wiring-work [NODES...]      default: 2 8 32 128 512 2048; 8 tasks a node
//
// Prints a markdown section: microseconds per task for each path and node count (the best
// of 5 rounds, each at least 20 ms of repetitions), the growth from each node count to the
// next, and over the whole range, which the target (at most linear) is judged on: single
// steps of a few microseconds move with the machine's load.
// The paths:
//   srun --wireup   the plugin's task hook: the first node of SLURM_STEP_NODELIST, its
//                   address from the name, the task's whole environment plan (plan_task)
//   SLURM_* mode    wireup-launch without PMIx: identity_from_slurm over the srun variables
//   agent mode      wireup-launch after the PMIx fence, one agent a node: decode every
//                   agent's record, group by node, rank offsets
//   exec mode       the same for one rank of `srun --mpi=pmix -n N*8 wireup-launch`: every
//                   rank's record
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "wireup/launch_layout.hpp"
#include "wireup/nodelist.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/task_env.hpp"

namespace {

using wireup::EnvLookup;
constexpr std::uint32_t kTasksPerNode = 8;

// "ip-10-1-0-[1-254],ip-10-1-1-[1-254],..." for n HyperPod-style nodes, as Slurm writes it.
std::string hyperpod_nodelist(std::uint32_t n) {
  std::string list;
  for (std::uint32_t third = 0; n > 0; ++third) {
    const std::uint32_t here = std::min<std::uint32_t>(n, 254);
    if (!list.empty()) list += ",";
    list += "ip-10-1-" + std::to_string(third) + "-[1-" + std::to_string(here) + "]";
    n -= here;
  }
  return list;
}

// Microseconds per call of fn: the best of 5 rounds of at least 20 ms each.
double micros_per_call(const std::function<void()>& fn) {
  using Clock = std::chrono::steady_clock;
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    std::uint64_t calls = 0;
    const auto t0 = Clock::now();
    double elapsed = 0;
    do {
      fn();
      ++calls;
      elapsed = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    } while (elapsed < 20000.0);
    best = std::min(best, elapsed / static_cast<double>(calls));
  }
  return best;
}

volatile std::size_t g_sink = 0;  // keeps results alive

double plugin_task(std::uint32_t nodes) {
  const std::string list = hyperpod_nodelist(nodes);
  const wireup::AdminConfig admin;
  const wireup::UserOptions user;
  const wireup::HostFacts host;
  const EnvLookup none = [](const std::string&) { return std::optional<std::string>(); };
  const std::uint32_t node = nodes - 1;  // the last node's last task
  return micros_per_call([&] {
    wireup::TaskFacts t;
    t.job_id = 4242;
    t.step_id = 0;
    t.layout = {node * kTasksPerNode + kTasksPerNode - 1,
                kTasksPerNode - 1,
                nodes * kTasksPerNode,
                kTasksPerNode,
                node,
                nodes};
    const std::string first = wireup::first_node(list);
    t.master_addr = wireup::ipv4_from_host_name(first).value_or("");
    t.master_addr_source = "node name";
    const wireup::TaskPlan plan = wireup::plan_task(t, admin, user, host, none);
    g_sink = g_sink + plan.decisions.size();
  });
}

double slurm_mode_task(std::uint32_t nodes) {
  const std::map<std::string, std::string> vars = {
      {"SLURM_JOB_ID", "4242"},
      {"SLURM_STEP_ID", "0"},
      {"SLURM_PROCID", std::to_string(nodes - 1)},
      {"SLURM_LOCALID", "0"},
      {"SLURM_NODEID", std::to_string(nodes - 1)},
      {"SLURM_STEP_NUM_TASKS", std::to_string(nodes)},
      {"SLURM_STEP_NUM_NODES", std::to_string(nodes)},
      {"SLURM_STEP_TASKS_PER_NODE", "1(x" + std::to_string(nodes) + ")"},
      {"SLURM_STEP_NODELIST", hyperpod_nodelist(nodes)},
  };
  const EnvLookup env = [&vars](const std::string& name) {
    const auto it = vars.find(name);
    return it == vars.end() ? std::optional<std::string>() : std::optional(it->second);
  };
  return micros_per_call([&] {
    const auto id = wireup::identity_from_slurm(env);
    g_sink = g_sink + (id ? id->size : 0);
  });
}

// One task's work after the fence: decode every record, group by node, rank offsets.
double after_fence(std::uint32_t records, std::uint32_t per_node, std::uint32_t nproc) {
  std::vector<std::string> encoded;
  for (std::uint32_t r = 0; r < records; ++r) {
    wireup::PeerRecord p{r / per_node, nproc,
                         "ip-10-1-" + std::to_string(r / per_node / 254) + "-" +
                             std::to_string(r / per_node % 254 + 1),
                         r == 0 ? "10.1.0.1:29500" : "", r == 0 ? "10.1.0.1:41000" : ""};
    encoded.push_back(wireup::encode_peer(p));
  }
  return micros_per_call([&] {
    std::vector<std::uint32_t> node_ids, nprocs;
    node_ids.reserve(records);
    nprocs.reserve(records);
    for (const auto& e : encoded) {
      const wireup::PeerRecord p = wireup::decode_peer(e);
      node_ids.push_back(p.node_id);
      nprocs.push_back(p.nproc);
    }
    const auto groups = wireup::group_by_node(node_ids);
    const auto offsets = wireup::rank_offsets(nprocs);
    g_sink = g_sink + groups.count + offsets.world_size;
  });
}

std::string cell(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v < 10 ? "%.2f" : v < 100 ? "%.1f" : "%.0f", v);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint32_t> counts;
  for (int i = 1; i < argc; ++i) {
    char* end = nullptr;
    const unsigned long n = std::strtoul(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || n < 2 || n > 16384) {
      std::fprintf(stderr, "wireup-bench-wiring-work: node count '%s': expected 2..16384\n",
                   argv[i]);
      return 2;
    }
    counts.push_back(static_cast<std::uint32_t>(n));
  }
  if (counts.empty()) counts = {2, 8, 32, 128, 512, 2048};
  std::sort(counts.begin(), counts.end());

  struct Path {
    const char* name;
    std::function<double(std::uint32_t)> run;
  };
  const std::vector<Path> paths = {
      {"srun --wireup (plugin, per task)", plugin_task},
      {"wireup-launch SLURM_* mode (per task)", slurm_mode_task},
      {"wireup-launch agent mode (per agent, 1 a node)",
       [](std::uint32_t n) { return after_fence(n, 1, kTasksPerNode); }},
      {"wireup-launch exec mode (per rank, 8 a node)",
       [](std::uint32_t n) { return after_fence(n * kTasksPerNode, kTasksPerNode, 1); }},
  };

  std::printf("### wireup's own wiring work per task (wireup-bench-wiring-work)\n\n");
  std::printf(
      "Microseconds of pure logic per task (best of 5 rounds), %u tasks a node; "
      "growth = time at one node count over the previous one.\n\n",
      kTasksPerNode);
  std::string head = "| path |";
  std::string rule = "|---|";
  for (const auto n : counts) {
    head += " " + std::to_string(n) + " nodes us |";
    rule += "---|";
  }
  for (std::size_t i = 1; i < counts.size(); ++i) {
    head += " growth x" + cell(static_cast<double>(counts[i]) / counts[i - 1]) + " |";
    rule += "---|";
  }
  const double range = static_cast<double>(counts.back()) / counts.front();
  head += " growth " + std::to_string(counts.front()) + "->" + std::to_string(counts.back()) +
          " (x" + cell(range) + ") |";
  rule += "---|";
  std::printf("%s\n%s\n", head.c_str(), rule.c_str());
  bool linear = true;
  for (const auto& p : paths) {
    std::vector<double> us;
    for (const auto n : counts) us.push_back(p.run(n));
    std::string row = std::string("| ") + p.name + " |";
    for (const double v : us) row += " " + cell(v) + " |";
    for (std::size_t i = 1; i < us.size(); ++i) row += " " + cell(us[i] / us[i - 1]) + " |";
    const double overall = us.back() / us.front();
    if (counts.size() > 1 && overall > range) linear = false;
    row += " " + cell(overall) + " |";
    std::printf("%s\n", row.c_str());
  }
  std::printf(
      "\nTarget: each path's own work grows at most linearly with nodes (its growth "
      "over the whole range at most the node factor): %s\n",
      linear ? "met" : "NOT met");
  return 0;
}
