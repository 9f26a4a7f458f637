#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wireup {

// Where the local PMIx server listens, from PMIX_SERVER_URI4 and its older
// spellings: "1211301888.1;tcp4://127.0.0.1:39957" or "...;tcp6://[::1]:4000".
// Anything else (no URI, another transport) gives nullopt.
// The variables a PMIx server sets for its clients, newest spelling first.
inline constexpr const char* kPmixServerUriVars[] = {"PMIX_SERVER_URI41", "PMIX_SERVER_URI4",
                                                     "PMIX_SERVER_URI3", "PMIX_SERVER_URI21",
                                                     "PMIX_SERVER_URI2"};

struct PmixServerAddress {
  bool ipv6 = false;
  std::string addr;  // numeric, without brackets
  std::uint32_t port = 0;
};
std::optional<PmixServerAddress> parse_pmix_server_uri(std::string_view uri);

}  // namespace wireup
