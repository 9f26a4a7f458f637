#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace wireup {

// The IPv4 literal other nodes reach this one at, without DNS: --local-addr,
// then an ip-A-B-C-D host name (PMIx's, then gethostname's), then the first
// up, non-loopback interface, then 127.0.0.1.
std::string choose_ipv4(const std::optional<std::string>& local_addr,
                        const std::optional<std::string>& pmix_host);

// The first port from `preferred` on that nothing listens on (bind test on
// all addresses, no SO_REUSEADDR). Throws std::runtime_error after `tries`.
std::uint32_t pick_free_port(std::uint32_t preferred, unsigned tries = 64);

// A listening TCP socket on addr with a kernel-chosen port, kept open so
// nobody can take it. Returns the fd; port is filled in.
int listen_tcp(const std::string& addr, std::uint32_t& port);

// A listening TCP socket on every IPv4 address at `port` (SO_REUSEADDR, as
// torch's own store sets it), or the next free one of `tries` ports; `port`
// is updated. Throws std::runtime_error naming the port(s) when none binds.
int listen_any(std::uint32_t& port, unsigned tries);

// Connects, retrying for up to timeout_ms while the peer is not listening yet.
int connect_tcp(const std::string& addr, std::uint32_t port, int timeout_ms);

std::string local_host_name();

}  // namespace wireup
