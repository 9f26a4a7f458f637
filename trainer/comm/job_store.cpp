#include "comm/job_store.hpp"

#include <c10/util/Exception.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include "comm/collective_deadline.hpp"

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
  so.timeout = std::max<std::chrono::milliseconds>(collective_timeout(), std::chrono::seconds(1));
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

c10::intrusive_ptr<c10d::Store> shared_job_store(const WorldLayout& w) {
  static std::mutex m;
  static c10::intrusive_ptr<c10d::Store> store;  // kept: rank 0's serves the others
  const std::lock_guard<std::mutex> lock(m);
  if (!store) store = open_job_store(w);
  return store;
}

std::chrono::milliseconds not_arrived_grace() {
  return std::min<std::chrono::milliseconds>(collective_timeout(), std::chrono::seconds(10));
}

std::vector<int> ranks_not_at(c10d::Store& store, const std::string& prefix, int rank, int size,
                              std::uint64_t n, std::chrono::milliseconds grace) {
  const auto key = [&prefix](int r) { return prefix + std::to_string(r); };
  const std::string mine = std::to_string(n);
  // The answer of the last complete look: the store's server (rank 0, itself
  // timing out) may exit during the grace period; what was read before stands.
  std::vector<int> missing;
  try {
    store.set(key(rank), std::vector<std::uint8_t>(mine.begin(), mine.end()));
    const auto until = std::chrono::steady_clock::now() + grace;
    for (;;) {
      std::vector<int> look;
      for (int r = 0; r < size; ++r) {
        if (r == rank) continue;
        bool there = false;
        if (store.check({key(r)})) {
          const auto v = store.get(key(r));
          there = std::stoull(std::string(v.begin(), v.end())) >= n;
        }
        if (!there) look.push_back(r);
      }
      missing = std::move(look);
      if (missing.empty() || std::chrono::steady_clock::now() > until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  } catch (const std::exception&) {
    // The store is gone: the last complete look, else no rank named.
  }
  return missing;
}

}  // namespace wireup::train
