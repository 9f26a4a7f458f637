// wireup-launch: rank wiring from PMIx (or Slurm) and torchrun-style supervision.
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "agent/agent.hpp"
#include "exec_mode.hpp"
#include "job_wiring.hpp"
#include "supervision/launcher_signals.hpp"
#include "supervision/spawn.hpp"
#include "wireup/error.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_layout.hpp"
#include "wireup/launch_options.hpp"
#include "wireup/stderr_lines.hpp"
#include "wireup/version.hpp"

namespace {

using namespace wireup;

constexpr int kUsageError = 2;

std::uint32_t count_gpus() {
  std::uint32_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           "/dev", std::filesystem::directory_options::skip_permission_denied)) {
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
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    return static_cast<std::uint32_t>(CPU_COUNT(&set));
  return static_cast<std::uint32_t>(sysconf(_SC_NPROCESSORS_ONLN));
}

}  // namespace

int main(int argc, char** argv) {
  wireup::stderr_by_whole_lines();
  LaunchOptions o;
  try {
    const ParsedArgs p =
        parse_launch_args(std::vector<std::string>(argv + 1, argv + argc),
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
    const sigset_t old_mask = block_launcher_signals(o);
    Wiring w = wire_job(o, agent_mode, nproc);
    const JobLayout& job = w.layout;
    if (o.verbose)
      std::cerr << "wireup-launch: " << job.source << " task " << job.task_rank << "/"
                << job.task_count << " group " << job.group_rank << "/" << job.group_count
                << " ranks " << job.first_rank << ".." << (job.first_rank + job.nproc - 1) << " of "
                << job.world_size << " master " << job.master_addr << ":" << job.master_port
                << (job.control.empty() ? "" : " control " + job.control) << "\n";
    if (!agent_mode) return run_exec_mode(o, job, w.conn, old_mask);
    const int code = run_agent(o, job, w.conn, current_env());
    if (w.conn.pmix) w.conn.pmix->finalize();
    return code;
  } catch (const InputError& e) {
    std::cerr << "wireup-launch: " << e.what() << "\n";
    return kUsageError;
  } catch (const std::exception& e) {
    std::cerr << "wireup-launch: " << e.what() << "\n";
    return 1;
  }
}
