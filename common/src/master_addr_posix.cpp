// The real sources behind find_node_ipv4: the resolver and file reads. Plain
// POSIX and stdio: this runs inside slurmstepd, where iostreams cost start-up.
#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>

#include "wireup/master_addr.hpp"

namespace wireup {
namespace {

constexpr std::size_t kMaxConfBytes = 16u << 20;

std::optional<std::string> resolve_ipv4(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return std::nullopt;
  char buf[INET_ADDRSTRLEN] = {};
  const auto* sin = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  const bool ok = inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) != nullptr;
  freeaddrinfo(res);
  return ok ? std::optional<std::string>(buf) : std::nullopt;
}

// Whole file, or nullopt when unreadable or larger than kMaxConfBytes.
std::optional<std::string> read_bounded(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return std::nullopt;
  std::string text;
  char buf[65536];
  std::size_t n;
  bool ok = true;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    text.append(buf, n);
    if (text.size() > kMaxConfBytes) {
      ok = false;
      break;
    }
  }
  if (std::ferror(f)) ok = false;
  std::fclose(f);
  return ok ? std::optional<std::string>(std::move(text)) : std::nullopt;
}

}  // namespace

AddressSources system_address_sources(std::vector<std::string> conf_paths) {
  return {resolve_ipv4, read_bounded, std::move(conf_paths)};
}

NodeAddress system_node_ipv4(const std::string& node,
                             const std::optional<std::string>& task_slurm_conf) {
  const char* own = std::getenv("SLURM_CONF");
  const auto paths =
      slurm_conf_candidates(task_slurm_conf, own ? std::optional<std::string>(own) : std::nullopt);
  return find_node_ipv4(node, system_address_sources(paths));
}

}  // namespace wireup
