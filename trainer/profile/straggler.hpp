#pragma once
#include <cstdint>
#include <string>
#include <vector>

// Stragglers: the spread of the ranks' compute time on a logged step (each
// rank's step time less its time getting batches and waiting in collectives),
// and the rule that warns about a rank slower than the others for several
// logged steps in a row. Plain C++.
namespace wireup::train {

// Seconds this process has spent inside collectives (issuing and waiting),
// summed over its threads (on a GPU the backward's collectives run on
// autograd's device thread); RecordedComm (watchdog/) adds to it.
void add_collective_seconds(double s);
double collective_seconds();

struct ComputeSpread {
  double min_s = 0, median_s = 0, max_s = 0;
  int slowest_rank = -1;  // the lowest rank with max_s; -1: no ranks
};

// Of one compute time per rank (index = rank); the median of an even count is
// the mean of the middle two.
ComputeSpread spread_of(const std::vector<double>& per_rank);

// A rank whose compute time is above ratio x the median on `steps` logged
// steps in a row is reported on the step it reaches that count and every
// `steps` logged steps after while it stays slow; one step at or below
// resets its count.
class StragglerRule {
 public:
  // ratio > 1, steps >= 1 (checked by the flags).
  StragglerRule(double ratio, std::int64_t steps) : ratio_(ratio), steps_(steps) {}
  struct Straggler {
    int rank = 0;
    double compute_s = 0;
    std::int64_t consecutive = 0;
  };
  // One logged step: the ranks to warn about now, lowest rank first.
  std::vector<Straggler> observe(const std::vector<double>& per_rank, const ComputeSpread& s);

 private:
  double ratio_;
  std::int64_t steps_;
  std::vector<std::int64_t> run_;  // per rank: logged steps in a row above the limit
};

// "[straggler] warning: rank 1 (host vm) computed 0.512 s, 2.10x the median
// 0.244 s, on 10 logged steps in a row (step 40)".
std::string format_straggler_warning(const StragglerRule::Straggler& s, const std::string& host,
                                     double median_s, std::int64_t step);

}  // namespace wireup::train
