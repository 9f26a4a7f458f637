// wireup-launch: rank wiring from PMIx (or Slurm) and torchrun-style supervision.
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "agent.hpp"
#include "job_wiring.hpp"
#include "pmix_handoff.hpp"
#include "wireup/error.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_layout.hpp"
#include "wireup/launch_options.hpp"
#include "wireup/version.hpp"

extern char** environ;

namespace {

using namespace wireup;

constexpr int kUsageError = 2;

std::vector<std::string> current_env() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  return env;
}

std::uint32_t count_gpus() {
  std::uint32_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/dev", std::filesystem::directory_options::skip_permission_denied)) {
    const auto name = e.path().filename().string();
    if (name.size() > 6 && name.rfind("nvidia", 0) == 0 &&
        name.find_first_not_of("0123456789", 6) == std::string::npos)
      ++n;
  }
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible_gpu_count(cvd ? std::optional<std::string>(cvd) : std::nullopt, n);
}

std::uint32_t count_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<std::uint32_t>(CPU_COUNT(&set));
  return static_cast<std::uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
}

// Exec mode: this task becomes the worker.
int exec_worker(const LaunchOptions& o, Wiring& w) {
  WorkerSpec spec;
  spec.rank = w.first_rank;
  spec.local_rank = w.local_rank;
  spec.world_size = w.world_size;
  spec.local_world_size = w.local_size;
  spec.group_rank = w.group_rank;
  spec.group_world_size = w.group_count;
  spec.role = o.role;
  spec.master_addr = w.master_addr;
  spec.master_port = w.master_port;
  spec.max_restarts = o.max_restarts;
  spec.run_id = w.run_id;
  spec.keep_task_identity = true;
  if (!o.log_dir.empty()) {
    // No supervisor reads it here, but the file is kept where the user looks.
    const auto dir = std::filesystem::path(o.log_dir) / "attempt_0" / std::to_string(spec.rank);
    std::filesystem::create_directories(dir);
    spec.error_file = (dir / "error.json").string();
  }
  const auto env = build_worker_env(spec, current_env());
  const auto argv = worker_argv(o);
  if (o.verbose || std::getenv("WIREUP_LAUNCH_TIMING"))
    std::cerr << "wireup-launch: timing rank " << spec.rank << ": pmix_init_ms=" << w.pmix_init_ms
              << " fence_ms=" << w.fence_ms << " spawn_ms=0\n";
  // A PMIx client must finalize before exec, or mpirun fails the job; the
  // connection itself stays open until the task exits (pmix_handoff.hpp).
  if (w.pmix && !finalize_keeping_connection(*w.pmix) && o.verbose)
    std::cerr << "wireup-launch: no TCP PMIx server URI; the finalized connection closes now\n";
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  execvpe(cargv[0], cargv.data(), cenv.data());
  std::cerr << "wireup-launch: cannot run " << argv[0] << ": " << std::strerror(errno) << "\n";
  return errno == ENOENT ? 127 : 126;
}

}  // namespace

int main(int argc, char** argv) {
  LaunchOptions o;
  try {
    const ParsedArgs p = parse_launch_args(std::vector<std::string>(argv + 1, argv + argc),
                                           [](const std::string& k) -> std::optional<std::string> {
                                             const char* v = std::getenv(k.c_str());
                                             return v ? std::optional<std::string>(v) : std::nullopt;
                                           });
    if (p.help) {
      std::cout << launch_usage();
      return 0;
    }
    if (p.version) {
      std::cout << "wireup-launch " << kVersion << "\n";
      return 0;
    }
    o = p.options;
  } catch (const InputError& e) {
    std::cerr << "wireup-launch: " << e.what() << "\n";
    return kUsageError;
  }
  for (const auto& f : o.ignored)
    if (o.verbose) std::cerr << "wireup-launch: " << f << " ignored: rank wiring comes from PMIx\n";

  try {
    const bool agent_mode = o.nproc_per_node.has_value();
    const std::uint32_t nproc =
        agent_mode ? resolve_nproc(*o.nproc_per_node, count_gpus(), count_cpus()) : 1;
    if (agent_mode) block_agent_signals(o);
    Wiring w = wire_job(o, agent_mode, nproc);
    if (o.verbose)
      std::cerr << "wireup-launch: " << w.source << " task " << w.task_rank << "/" << w.task_count
                << " group " << w.group_rank << "/" << w.group_count << " ranks " << w.first_rank
                << ".." << (w.first_rank + w.nproc - 1) << " of " << w.world_size << " master "
                << w.master_addr << ":" << w.master_port << "\n";
    if (!agent_mode) return exec_worker(o, w);
    const int code = run_agent(o, w, current_env());
    if (w.pmix) w.pmix->finalize();
    return code;
  } catch (const InputError& e) {
    std::cerr << "wireup-launch: " << e.what() << "\n";
    return kUsageError;
  } catch (const std::exception& e) {
    std::cerr << "wireup-launch: " << e.what() << "\n";
    return 1;
  }
}
