#pragma once
// The agent's workers: the run directory, starting each attempt's workers
// (fork+exec or through the --preload server), their output, signalling and
// reaping them.
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/preload.hpp"
#include "job_wiring.hpp"
#include "supervision/fd_dispatch.hpp"
#include "supervision/spawn.hpp"
#include "supervision/worker_stream.hpp"
#include "wireup/launch_env.hpp"
#include "wireup/launch_options.hpp"
#include "wireup/launch_report.hpp"

namespace wireup {

using Clock = std::chrono::steady_clock;

struct Worker {
  std::uint32_t local_rank = 0, rank = 0;
  pid_t pid = -1;
  bool running = false;
  WorkerExit exit;
  Stream out, err;
  std::string error_file, stop_reason, dir;
};

class AgentWorkers {
 public:
  // What the rest of the agent hears from the workers.
  struct Events {
    std::function<void(const Worker&)> exited;       // reaped, its output drained
    std::function<void(const std::string&)> failed;  // --preload cannot start workers
  };

  AgentWorkers(const LaunchOptions& o, const JobLayout& job, const std::vector<std::string>& env,
               Events events)
      : o_(o), job_(job), base_env_(env), events_(std::move(events)) {}

  // Orphans of the workers (dataloaders, shells) become the agent's, so they
  // are reaped and killed.
  static void adopt_orphans();
  void make_run_dir();    // --log-dir, or a private one of the agent's own; throws
  void remove_run_dir();  // the private one, at the end

  // A fresh set of workers for `attempt`, whose MASTER_PORT is `master_port`
  // (AgentRestarts': a fresh one per attempt without --agent-store); starts the
  // preload server for --preload. False: spawn_all() once the server is ready.
  bool prepare(std::uint32_t attempt, std::uint32_t master_port);
  void spawn_all();  // every worker; events_.failed when --preload cannot
  std::uint32_t attempt() const { return attempt_; }

  // Each round of the event loop: the workers' output, and the preload
  // server while it imports (`on_readable` then calls on_preload_readable()).
  void watch_output(FdDispatch& d);
  void watch_preload(FdDispatch& d, FdDispatch::Handler on_readable);
  bool on_preload_readable();  // true: the server just became ready
  void reap();                 // every exited child: events_.exited for each worker
  void stop_preload() { preload_.reset(); }

  std::size_t running_count() const;
  bool all_exited() const { return !workers_.empty() && running_count() == 0; }
  void kill_all(int sig);
  // Tells each running worker why it is stopped, in its stop-reason file.
  void write_stop_reasons(const std::string& why) const;

 private:
  WorkerSpec job_spec() const;  // what every worker of this attempt shares
  void spawn(Worker& wk);
  void route_output(Worker& wk, Stream& s, int pipe_fd) const;
  pid_t start_program(const Program& prog, int out_fd, int err_fd);
  void on_preload_reaped(int status);
  static void on_stream_readable(Stream& s);

  const LaunchOptions& o_;
  const JobLayout& job_;
  const std::vector<std::string>& base_env_;
  const Events events_;
  std::vector<Worker> workers_;
  std::uint32_t attempt_ = 0;      // the attempt these workers run
  std::uint32_t master_port_ = 0;  // that attempt's MASTER_PORT
  std::filesystem::path run_dir_;
  std::filesystem::path temp_run_dir_;  // the agent made run_dir_: removed at the end
  double spawn_ms_ = 0;
  std::unique_ptr<PreloadServer> preload_;  // --preload
  Clock::time_point preload_start_;
  double preload_ms_ = 0;
};

}  // namespace wireup
