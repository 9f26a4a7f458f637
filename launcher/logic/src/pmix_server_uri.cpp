#include "wireup/pmix_server_uri.hpp"

#include "wireup/text.hpp"

namespace wireup {

std::optional<PmixServerAddress> parse_pmix_server_uri(std::string_view uri) {
  const auto semi = uri.rfind(';');
  if (semi != std::string_view::npos) uri.remove_prefix(semi + 1);
  PmixServerAddress out;
  if (uri.starts_with("tcp4://")) {
    uri.remove_prefix(7);
  } else if (uri.starts_with("tcp6://")) {
    uri.remove_prefix(7);
    out.ipv6 = true;
  } else {
    return std::nullopt;  // usock, or a transport PMIx 4 does not have
  }
  const auto colon = uri.rfind(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view addr = uri.substr(0, colon);
  if (out.ipv6) {
    if (addr.size() < 3 || addr.front() != '[' || addr.back() != ']') return std::nullopt;
    addr = addr.substr(1, addr.size() - 2);
  }
  const auto port = parse_uint(uri.substr(colon + 1), 65535);
  if (addr.empty() || !port || *port == 0) return std::nullopt;
  out.addr = std::string(addr);
  out.port = static_cast<std::uint32_t>(*port);
  return out;
}

}  // namespace wireup
