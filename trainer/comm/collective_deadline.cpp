#include "comm/collective_deadline.hpp"

#include <atomic>
#include <cstdint>

namespace wireup::train {
namespace {

std::atomic<std::int64_t> g_timeout_ms{600000};

}  // namespace

void set_collective_timeout(std::chrono::milliseconds t) { g_timeout_ms.store(t.count()); }

std::chrono::milliseconds collective_timeout() {
  return std::chrono::milliseconds(g_timeout_ms.load(std::memory_order_relaxed));
}

}  // namespace wireup::train
