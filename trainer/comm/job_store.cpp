#include "comm/job_store.hpp"

#include <chrono>
#include <cstdlib>
#include <string>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace wireup::train {

c10::intrusive_ptr<c10d::Store> open_job_store(const WorldLayout& w) {
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(w.master_port);
  const char* agent_store = std::getenv("TORCHELASTIC_USE_AGENT_STORE");
  so.isServer = w.rank == 0 && !(agent_store && std::string(agent_store) == "True");
  so.numWorkers = w.world;
  so.waitWorkers = false;
  so.timeout = std::chrono::minutes(5);
  return c10::make_intrusive<c10d::TCPStore>(w.master_addr, so);
}

}  // namespace wireup::train
