#include "pmix/pmix_socket.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <optional>

#include "wireup/pmix_server_uri.hpp"

namespace wireup {

namespace {

std::optional<PmixServerAddress> server_address() {
  for (const char* var : kPmixServerUriVars)
    if (const char* v = std::getenv(var)) return parse_pmix_server_uri(v);
  return std::nullopt;
}

bool peer_is(int fd, const PmixServerAddress& a) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  if (!a.ipv6 && ss.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&ss);
    in_addr want{};
    return inet_pton(AF_INET, a.addr.c_str(), &want) == 1 && in->sin_addr.s_addr == want.s_addr &&
           ntohs(in->sin_port) == a.port;
  }
  if (a.ipv6 && ss.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    in6_addr want{};
    return inet_pton(AF_INET6, a.addr.c_str(), &want) == 1 &&
           std::memcmp(&in6->sin6_addr, &want, sizeof want) == 0 && ntohs(in6->sin6_port) == a.port;
  }
  return false;
}

}  // namespace

int find_pmix_server_socket() {
  const auto addr = server_address();
  if (!addr) return -1;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int found = -1;
  while (const dirent* e = readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(d)) continue;
    struct stat st {};
    if (fstat(static_cast<int>(fd), &st) == 0 && S_ISSOCK(st.st_mode) &&
        peer_is(static_cast<int>(fd), *addr)) {
      found = static_cast<int>(fd);
      break;
    }
  }
  closedir(d);
  return found;
}

}  // namespace wireup
