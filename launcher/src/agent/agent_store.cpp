#include "agent/agent_store.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "wireup/store_protocol.hpp"

namespace wireup {

namespace {

// One client's socket; what it says is the protocol's business.
struct Conn {
  int fd = -1;
  StoreProtocol::ConnId id = 0;
  std::string peer;
  std::string out;  // replies and wake-ups not yet sent
  bool dead = false;
};

void say(const std::string& line) {
  const std::string s = "wireup-launch: agent store: " + line + "\n";
  [[maybe_unused]] ssize_t n = write(2, s.data(), s.size());
}

}  // namespace

struct AgentStore::Impl {
  int listen_fd = -1, wake_fd = -1;
  std::thread thread;
  std::mutex mu;  // held while serving what a poll found, and by clear_keys()
  StoreProtocol protocol;
  std::map<StoreProtocol::ConnId, Conn> conns;  // in the order they were accepted

  void run();
  void accept_new();
  void read_from(Conn& c);
  void take(Conn& c, StoreProtocol::Output o);  // queue its sends; close c if refused
  void send_pending(Conn& c);
};

void AgentStore::Impl::accept_new() {
  for (;;) {
    sockaddr_in6 sa{};
    socklen_t len = sizeof sa;
    const int fd =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&sa), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection reset before it was accepted
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const StoreProtocol::ConnId id = protocol.open();
    Conn& c = conns[id];
    c.fd = fd;
    c.id = id;
    char text[INET6_ADDRSTRLEN] = {};
    if (sa.sin6_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&sa)->sin_addr, text, sizeof text);
    else if (sa.sin6_family == AF_INET6)
      inet_ntop(AF_INET6, &sa.sin6_addr, text, sizeof text);
    c.peer = text;
  }
}

void AgentStore::Impl::read_from(Conn& c) {
  char buf[65536];
  while (!c.dead) {
    const ssize_t n = read(c.fd, buf, sizeof buf);
    if (n > 0) {
      take(c, protocol.feed(c.id, {buf, static_cast<std::size_t>(n)}));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) c.dead = true;  // closed by the client
    break;
  }
}

void AgentStore::Impl::take(Conn& c, StoreProtocol::Output o) {
  for (auto& [id, bytes] : o.sends) {
    std::string& out = conns.at(id).out;
    if (out.empty())
      out = std::move(bytes);  // an 8 MiB GET is not copied twice
    else
      out += bytes;
  }
  if (o.close) {
    say("closing the connection from " + c.peer + ": " + *o.close);
    c.dead = true;
  }
}

void AgentStore::Impl::send_pending(Conn& c) {
  while (!c.out.empty() && !c.dead) {
    const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) c.dead = true;
      return;
    }
  }
}

void AgentStore::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<Conn*> order;
  for (;;) {
    fds.assign({{wake_fd, POLLIN, 0}, {listen_fd, POLLIN, 0}});
    order.clear();
    for (auto& [id, c] : conns) {
      fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      order.push_back(&c);
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      say(std::string("poll: ") + std::strerror(errno) + "; no longer serving");
      return;
    }
    if (fds[0].revents) return;  // stopping
    const std::lock_guard<std::mutex> lock(mu);
    for (std::size_t i = 0; i < order.size(); ++i)
      if (fds[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(*order[i]);
    if (fds[1].revents & POLLIN) accept_new();
    for (auto& [id, c] : conns) send_pending(c);  // replies, and wake-ups of other waiters
    for (auto it = conns.begin(); it != conns.end();) {
      if (!it->second.dead) {
        ++it;
        continue;
      }
      protocol.close(it->first);
      close(it->second.fd);
      it = conns.erase(it);
    }
  }
}

AgentStore::AgentStore(int listen_fd) : impl_(std::make_unique<Impl>()) {
  impl_->listen_fd = listen_fd;
  impl_->wake_fd = eventfd(0, EFD_CLOEXEC);
  if (impl_->wake_fd < 0) {
    close(listen_fd);
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  const int flags = fcntl(listen_fd, F_GETFL);
  fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK);
  Impl* impl = impl_.get();
  impl_->thread = std::thread([impl] {
    try {
      impl->run();
    } catch (const std::exception& e) {  // e.g. out of memory: clients then fail, not hang
      say(std::string(e.what()) + "; no longer serving");
    }
    for (auto& [id, c] : impl->conns) close(c.fd);
    impl->conns.clear();
  });
}

void AgentStore::clear_keys() {
  const std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->protocol.clear_keys();
}

AgentStore::~AgentStore() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(impl_->wake_fd, &one, sizeof one);
  impl_->thread.join();
  close(impl_->wake_fd);
  close(impl_->listen_fd);
}

}  // namespace wireup
