#include "node_address.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include "wireup/rendezvous.hpp"

namespace wireup::spank {

std::string node_ipv4(const std::string& node) {
  if (auto ip = ipv4_from_host_name(node)) return *ip;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(node.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return "";
  char buf[INET_ADDRSTRLEN] = {};
  const auto* sin = reinterpret_cast<const sockaddr_in*>(res->ai_addr);
  const bool ok = inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf) != nullptr;
  freeaddrinfo(res);
  return ok ? buf : "";
}

}  // namespace wireup::spank
