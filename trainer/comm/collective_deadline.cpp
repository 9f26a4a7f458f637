#include "comm/collective_deadline.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>

namespace wireup::train {
namespace {

std::atomic<std::int64_t> g_timeout_ms{600000};
std::atomic<StallReporter> g_reporter{nullptr};

}  // namespace

void set_collective_timeout(std::chrono::milliseconds t) { g_timeout_ms.store(t.count()); }

std::chrono::milliseconds collective_timeout() {
  return std::chrono::milliseconds(g_timeout_ms.load(std::memory_order_relaxed));
}

void set_stall_reporter(StallReporter r) { g_reporter.store(r); }

void report_stall(int rank, const std::string& group, double waited_s,
                  const std::vector<int>& missing, const std::string& detail) {
  if (const StallReporter r = g_reporter.load()) {
    r(rank, group, waited_s, missing, detail);
    return;
  }
  std::string ranks;
  for (const int m : missing) ranks += (ranks.empty() ? "" : ", ") + std::to_string(m);
  std::fprintf(stderr,
               "wireup-train: peer stalled: rank %d waited %.1f s (group %s); not arrived: %s\n"
               "wireup-train: %s\n",
               rank, waited_s, group.c_str(), ranks.empty() ? "unknown" : ranks.c_str(),
               detail.c_str());
}

}  // namespace wireup::train
