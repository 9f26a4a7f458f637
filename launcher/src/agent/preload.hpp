#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "wireup/launch_options.hpp"

namespace wireup {

// `--preload`: one Python process per agent (src/agent/preload_server.py) that
// imports the modules once and forks every worker of this agent from then on.
// Workers are double-forked, so the agent (a child subreaper) adopts them:
// it waits for them and signals their process groups as for exec'd workers.
class PreloadServer {
 public:
  // Starts `o.python -u -c CODE ...` in its own process group, with `env`.
  PreloadServer(const LaunchOptions& o, const std::vector<std::string>& env);
  ~PreloadServer();  // SIGKILLs it unless it was reaped already
  PreloadServer(const PreloadServer&) = delete;
  PreloadServer& operator=(const PreloadServer&) = delete;

  pid_t pid() const { return pid_; }
  int fd() const { return fd_; }  // poll for POLLIN while importing()
  bool ready() const { return ready_; }
  // Not ready, and not closed: the agent learns how it ended when it reaps it.
  bool importing() const { return !ready_ && !closed_; }
  // Reads the READY line when it is there. Throws std::runtime_error if the
  // server says anything else.
  void on_readable();
  // The server's process was reaped by the agent.
  void reaped() { reaped_ = true; }

  // Forks one worker running `argv` (the PROGRAM's argv: SCRIPT ARGS or -m
  // MODULE ARGS) with `env`, stdout/stderr on the given fds. Returns its pid;
  // throws std::runtime_error when the server cannot.
  pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env, int out_fd,
              int err_fd);

  // The server's environment: a worker's, less what differs between ranks.
  static std::vector<std::string> shared_env(const std::vector<std::string>& worker_env);

 private:
  std::string read_line(int timeout_ms);

  pid_t pid_ = -1;
  int fd_ = -1;
  bool ready_ = false, reaped_ = false, closed_ = false;
  std::string in_;
};

}  // namespace wireup
