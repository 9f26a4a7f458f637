#include "comm/job_store.hpp"

#include <c10/util/Exception.h>
#include <torch/version.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace wireup::train {

namespace {

bool env_is(const char* name, const char* value) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == value;
}

}  // namespace

c10::intrusive_ptr<c10d::Store> open_job_store(const WorldLayout& w) {
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(w.master_port);
  so.isServer = w.rank == 0 && !env_is("TORCHELASTIC_USE_AGENT_STORE", "True");
  so.numWorkers = w.world;
  so.waitWorkers = false;
  so.timeout = std::chrono::minutes(5);
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  // torch 2.4+ defaults to the libuv store; USE_LIBUV=0 selects the plain one, as it
  // does for torch's env://. A torch built without libuv (Debian's 2.6) refuses the
  // default, so then the plain store is used: both speak the same protocol.
  if (env_is("USE_LIBUV", "0")) so.useLibUV = false;
  if (so.useLibUV) {
    try {
      return c10::make_intrusive<c10d::TCPStore>(w.master_addr, so);
    } catch (const c10::Error& e) {
      if (std::string(e.what()).find("without libuv") == std::string::npos) throw;
      so.useLibUV = false;
    }
  }
#endif
  return c10::make_intrusive<c10d::TCPStore>(w.master_addr, so);
}

}  // namespace wireup::train
