#include "profile/straggler.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

namespace wireup::train {
namespace {
std::atomic<std::int64_t> g_collective_ns{0};
}  // namespace

void add_collective_seconds(double s) {
  g_collective_ns.fetch_add(static_cast<std::int64_t>(s * 1e9), std::memory_order_relaxed);
}
double collective_seconds() {
  return static_cast<double>(g_collective_ns.load(std::memory_order_relaxed)) * 1e-9;
}

ComputeSpread spread_of(const std::vector<double>& per_rank) {
  ComputeSpread s;
  if (per_rank.empty()) return s;
  std::vector<double> sorted = per_rank;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  s.min_s = sorted.front();
  s.max_s = sorted.back();
  s.median_s = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  s.slowest_rank =
      static_cast<int>(std::find(per_rank.begin(), per_rank.end(), s.max_s) - per_rank.begin());
  return s;
}

std::vector<StragglerRule::Straggler> StragglerRule::observe(const std::vector<double>& per_rank,
                                                             const ComputeSpread& s) {
  run_.resize(per_rank.size(), 0);
  std::vector<Straggler> out;
  for (std::size_t r = 0; r < per_rank.size(); ++r) {
    if (!(per_rank[r] > ratio_ * s.median_s)) {
      run_[r] = 0;
      continue;
    }
    ++run_[r];
    if (run_[r] % steps_ == 0) out.push_back({static_cast<int>(r), per_rank[r], run_[r]});
  }
  return out;
}

std::string format_straggler_warning(const StragglerRule::Straggler& s, const std::string& host,
                                     double median_s, std::int64_t step) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "computed %.3f s, %.2fx the median %.3f s, on ", s.compute_s,
                median_s > 0 ? s.compute_s / median_s : 0.0, median_s);
  return "[straggler] warning: rank " + std::to_string(s.rank) + " (host " + host + ") " + buf +
         std::to_string(s.consecutive) + " logged steps in a row (step " + std::to_string(step) +
         ")";
}

}  // namespace wireup::train
