#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wireup/env_plan.hpp"

namespace wireup {

// Which streams a flag such as --tee or --redirects covers (torchrun's Std).
enum StdStreams : unsigned { kNoStreams = 0, kStdout = 1, kStderr = 2, kBothStreams = 3 };

// wireup-launch's command line. Flags follow torchrun's names (dashes or
// underscores, `--flag=v` or `--flag v`); each can also come from PET_<FLAG>.
struct LaunchOptions {
  // Agent mode when set: "K", "gpu", "cpu" or "auto". Unset: exec mode.
  std::optional<std::string> nproc_per_node;
  std::optional<std::string> nnodes;       // "N" or "MIN:MAX": checked against the job
  std::optional<std::uint32_t> node_rank;  // only for a job nothing else describes
  bool standalone = false;
  std::uint32_t max_restarts = 0;
  double monitor_interval = 0.1;  // seconds (accepted for torchrun parity)
  double grace_period = 30.0;     // seconds between a forwarded signal and SIGKILL
  std::string role = "default";
  std::string run_id;  // --rdzv-id; "" = derived from the job
  std::string log_dir;
  unsigned redirects = kNoStreams;
  bool redirects_given = false;
  unsigned tee = kNoStreams;
  std::vector<std::uint32_t> local_ranks_filter;  // empty = every local rank
  bool prefix_lines = true;                       // "[rank N]: " on console lines (agent mode)
  std::optional<std::string> master_addr;
  std::optional<std::uint32_t> master_port;
  std::optional<std::string> local_addr;
  std::optional<std::uint32_t> control_port;  // agent 0's restart port without PMIx
  std::vector<int> signals_to_handle;         // forwarded to workers
  bool no_python = false;
  bool run_module = false;           // -m
  std::string python = "python3";    // interpreter for .py programs and -m
  bool agent_store = false;          // agent 0 serves the TCPStore (agent mode)
  std::vector<std::string> preload;  // modules a fork server imports once per agent
  bool verbose = false;
  std::vector<std::string> ignored;  // torchrun flags accepted with no effect
  std::vector<std::string> program;  // PROGRAM ARGS (never empty after parsing)
};

// The default list torchrun forwards, plus the preemption signals SIGUSR1/2.
std::vector<int> default_forwarded_signals();

// Throws InputError naming the flag (or PET_ variable) and what was expected.
// `--help` is reported as LaunchOptions with an empty program; see help_wanted.
struct ParsedArgs {
  LaunchOptions options;
  bool help = false;
  bool version = false;
};
ParsedArgs parse_launch_args(const std::vector<std::string>& args, const EnvLookup& env);

// The argv wireup-launch execs for one worker (python wrapping applied).
std::vector<std::string> worker_argv(const LaunchOptions& o);

// True when PROGRAM runs under --python: a .py file (without --no-python) or -m.
bool runs_python(const LaunchOptions& o);

// "torch,numpy.linalg" -> {"torch", "numpy.linalg"}. Throws InputError unless
// every item is a dotted Python module name.
std::vector<std::string> parse_module_list(const std::string& what, const std::string& list);

// "SIGTERM,SIGUSR1,15" -> signal numbers. Throws InputError on an unknown name.
std::vector<int> parse_signal_list(const std::string& what, const std::string& list);

// "0,2-3" -> {0,2,3}. Throws InputError.
std::vector<std::uint32_t> parse_rank_list(const std::string& what, const std::string& list);

std::string launch_usage();

}  // namespace wireup
