#pragma once

namespace wireup {

// This process's connection to its PMIx server: the socket whose peer is
// the server's URI (PMIX_SERVER_URI4...). PMIx does not say which
// descriptor it uses. -1 when there is no TCP URI or no such socket.
int find_pmix_server_socket();

}  // namespace wireup
