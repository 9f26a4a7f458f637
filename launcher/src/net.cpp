#include "net.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include "wireup/rendezvous.hpp"

namespace wireup {

std::string local_host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

std::string choose_ipv4(const std::optional<std::string>& local_addr,
                        const std::optional<std::string>& pmix_host) {
  if (local_addr) {
    if (auto ip = ipv4_from_host_name(*local_addr)) return *ip;
  }
  if (pmix_host) {
    if (auto ip = ipv4_from_host_name(*pmix_host)) return *ip;
  }
  if (auto ip = ipv4_from_host_name(local_host_name())) return *ip;
  ifaddrs* list = nullptr;
  std::string found;
  if (getifaddrs(&list) == 0) {
    for (auto* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      if ((i->ifa_flags & IFF_UP) == 0 || (i->ifa_flags & IFF_LOOPBACK) != 0) continue;
      char text[INET_ADDRSTRLEN] = {};
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
      found = text;
    }
    freeifaddrs(list);
  }
  return found.empty() ? "127.0.0.1" : found;
}

namespace {

sockaddr_in ipv4(const std::string& addr, std::uint32_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<std::uint16_t>(port));
  if (addr.empty()) {
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
  } else if (inet_pton(AF_INET, addr.c_str(), &sa.sin_addr) != 1) {
    throw std::runtime_error("not an IPv4 address: " + addr);
  }
  return sa;
}

}  // namespace

std::uint32_t pick_free_port(std::uint32_t preferred, unsigned tries) {
  for (unsigned i = 0; i < tries; ++i) {
    const std::uint32_t port = preferred + i;
    if (port > 65535) break;
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) break;
    const sockaddr_in sa = ipv4("", port);
    const bool free = bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0;
    close(fd);
    if (free) return port;
  }
  throw std::runtime_error("no free TCP port in " + std::to_string(preferred) + "-" +
                           std::to_string(preferred + tries - 1) + " (pass --master-port)");
}

int listen_tcp(const std::string& addr, std::uint32_t& port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const sockaddr_in sa = ipv4(addr, 0);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || listen(fd, 1024) != 0) {
    const int e = errno;
    close(fd);
    throw std::runtime_error("listen on " + addr + ": " + std::strerror(e));
  }
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  port = ntohs(bound.sin_port);
  return fd;
}

int listen_any(std::uint32_t& port, unsigned tries) {
  int err = 0;
  for (unsigned i = 0; i < tries && port + i <= 65535; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const sockaddr_in sa = ipv4("", port + i);
    if (bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0 && listen(fd, 4096) == 0) {
      port += i;
      return fd;
    }
    err = errno;
    close(fd);
  }
  throw std::runtime_error("cannot listen on TCP port " + std::to_string(port) +
                           (tries > 1 ? "-" + std::to_string(port + tries - 1) : std::string()) +
                           ": " + std::strerror(err));
}

int connect_tcp(const std::string& addr, std::uint32_t port, int timeout_ms) {
  const sockaddr_in sa = ipv4(addr, port);
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
    if (connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) == 0) return fd;
    const int e = errno;
    close(fd);
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    const long waited =
        (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
    if (waited >= timeout_ms)
      throw std::runtime_error("connect to " + addr + ":" + std::to_string(port) + ": " +
                               std::strerror(e));
    // Under PMIx the listener exists before the fence (this covers backlog
    // hiccups); without PMIx agent 0 may still be starting.
    usleep(waited < 1000 ? 20000 : 100000);
  }
}

}  // namespace wireup
