#include "supervision/fd_dispatch.hpp"

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace wireup {

void FdDispatch::watch(int fd, Handler on_ready) {
  if (fd >= 0) watches_.push_back({fd, std::move(on_ready)});
}

bool FdDispatch::dispatch(int timeout_ms) {
  std::vector<pollfd> fds;
  fds.reserve(watches_.size());
  for (const auto& w : watches_) fds.push_back({w.fd, POLLIN, 0});
  const std::vector<Watch> round = std::move(watches_);
  watches_.clear();
  ended_ = false;
  if (poll(fds.data(), fds.size(), timeout_ms) < 0) {
    if (errno == EINTR) return false;
    throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
  }
  for (std::size_t i = 0; i < round.size() && !ended_; ++i)
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) round[i].on_ready();
  return true;
}

}  // namespace wireup
