#include "pmix/pmix_handoff.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>

#include "pmix/pmix_client.hpp"
#include "pmix/pmix_socket.hpp"

namespace {

// The PMIx socket's descriptor while PMIx_Finalize runs, else -1.
std::atomic<int> g_keep_fd{-1};

}  // namespace

// PMIx_Finalize ends with shutdown() and close() on its socket. close() only
// drops PMIx's descriptor (ours stays); shutdown() would end the connection
// for every descriptor, so for that one socket, during that one call, it is
// skipped. Every other caller gets libc's.
extern "C" int shutdown(int fd, int how) {
  if (fd >= 0 && fd == g_keep_fd.load()) return 0;
  using Fn = int (*)(int, int);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "shutdown"));
  return real(fd, how);
}

namespace wireup {

bool finalize_keeping_connection(PmixClient& pmix) {
  const int fd = find_pmix_server_socket();
  // F_DUPFD leaves close-on-exec off: the program inherits the connection.
  const int kept = fd >= 0 ? fcntl(fd, F_DUPFD, 3) : -1;
  if (kept >= 0) g_keep_fd.store(fd);
  pmix.finalize();
  g_keep_fd.store(-1);
  return kept >= 0;
}

}  // namespace wireup
