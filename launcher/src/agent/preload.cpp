#include "agent/preload.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#include "preload_server_code.hpp"
#include "supervision/spawn.hpp"
#include "wireup/stop_reason.hpp"

namespace wireup {

namespace {

constexpr int kReplyTimeoutMs = 30000;  // one fork, not an import

std::runtime_error sys_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// The server reads its code from the environment, so `ps` shows a short line.
constexpr const char* kBootstrap =
    "import os;exec(compile(os.environ.pop('WIREUP_PRELOAD_CODE'),'<wireup-launch "
    "--preload>','exec'))";

}  // namespace

std::vector<std::string> PreloadServer::shared_env(const std::vector<std::string>& worker_env) {
  std::vector<std::string> env;
  for (const auto& kv : worker_env) {
    const std::string_view name = std::string_view(kv).substr(0, kv.find('='));
    if (name == "RANK" || name == "LOCAL_RANK" || name == "ROLE_RANK" ||
        name == "TORCHELASTIC_ERROR_FILE" || name == kStopReasonVar)
      continue;
    env.push_back(kv);
  }
  env.push_back(std::string("WIREUP_PRELOAD_CODE=") + kPreloadServerCode);
  return env;
}

PreloadServer::PreloadServer(const LaunchOptions& o, const std::vector<std::string>& env) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) throw sys_error("socketpair");
  std::vector<std::string> argv = {o.python,
                                   "-u",
                                   "-c",
                                   kBootstrap,
                                   "3",
                                   std::to_string(getpid()),
                                   o.run_module ? "-m" : "path",
                                   o.program.at(0)};
  argv.insert(argv.end(), o.preload.begin(), o.preload.end());
  // As a worker: own process group, dies with the agent, clean signal state;
  // its end of the socket pair is fd 3.
  ChildSetup setup;
  setup.own_process_group = true;
  setup.pass_fd = sv[1];
  setup.close_other_fds = true;
  setup.default_signals = true;
  setup.mask = no_signals();
  setup.what = "--preload: ";
  setup.failure_code = 127;
  pid_t pid = -1;
  try {
    pid = spawn_program({argv, env}, setup);
  } catch (...) {
    close(sv[0]);
    close(sv[1]);
    throw;
  }
  close(sv[1]);
  pid_ = pid;
  fd_ = sv[0];
  fcntl(fd_, F_SETFL, fcntl(fd_, F_GETFL) | O_NONBLOCK);
}

PreloadServer::~PreloadServer() {
  if (fd_ >= 0) close(fd_);  // the server exits on EOF as well
  if (pid_ > 0 && !reaped_) killpg(pid_, SIGKILL);
}

void PreloadServer::on_readable() {
  char buf[256];
  for (;;) {
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n > 0) {
      in_.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    closed_ = true;  // it exited (an import failed): reaped soon, with its exit code
    break;
  }
  const auto nl = in_.find('\n');
  if (!ready_ && nl != std::string::npos) {
    if (in_.compare(0, nl, "READY") != 0)
      throw std::runtime_error("the preload process said " + in_.substr(0, nl));
    ready_ = true;
    in_.erase(0, nl + 1);
  }
}

std::string PreloadServer::read_line(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const auto nl = in_.find('\n');
    if (nl != std::string::npos) {
      std::string line = in_.substr(0, nl);
      in_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw std::runtime_error("the preload process did not answer in time");
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR) throw sys_error("poll");
    char buf[256];
    const ssize_t n = read(fd_, buf, sizeof buf);
    if (n > 0)
      in_.append(buf, static_cast<std::size_t>(n));
    else if (n == 0)
      throw std::runtime_error("the preload process is gone");
    else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
      throw sys_error("read");
  }
}

pid_t PreloadServer::spawn(const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, int out_fd, int err_fd) {
  std::string payload = std::to_string(argv.size()) + '\0';
  for (const auto& a : argv) payload += a + '\0';
  payload += std::to_string(env.size()) + '\0';
  for (const auto& e : env) payload += e + '\0';

  // The 8-byte length carries the worker's stdout and stderr.
  std::uint64_t size = payload.size();
  iovec iov{&size, sizeof size};
  alignas(cmsghdr) char control[CMSG_SPACE(2 * sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* cm = CMSG_FIRSTHDR(&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(2 * sizeof(int));
  const int fds[2] = {out_fd, err_fd};
  std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
  ssize_t n;
  do n = sendmsg(fd_, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof size)) throw sys_error("the preload process: send");

  std::size_t done = 0;
  while (done < payload.size()) {
    n = send(fd_, payload.data() + done, payload.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      pollfd p{fd_, POLLOUT, 0};
      if (poll(&p, 1, kReplyTimeoutMs) == 0)
        throw std::runtime_error("the preload process does not read its requests");
    } else {
      throw sys_error("the preload process: send");
    }
  }
  const std::string line = read_line(kReplyTimeoutMs);
  if (line.rfind("PID ", 0) == 0) {
    const long pid = std::strtol(line.c_str() + 4, nullptr, 10);
    if (pid > 0) return static_cast<pid_t>(pid);
  }
  throw std::runtime_error("the preload process could not start a worker: " + line);
}

}  // namespace wireup
