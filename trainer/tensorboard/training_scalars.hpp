#pragma once
#include <cstdint>
#include <vector>

#include "config/metrics.hpp"
#include "tensorboard/event_records.hpp"

// The tags wireup-train writes: one per figure of the [train] and [val]
// lines, named after the line's key, so a chart and a log line read alike.
namespace wireup::train::tensorboard {

// A logged step's figures, as the [train] line prints them:
// train/loss, train/lr, train/grad_norm, train/tokens_per_s, train/mfu,
// train/step_time_s, train/peak_mem_mib, train/data_wait_s.
std::vector<Scalar> step_scalars(const StepMetrics& m);

// A validation's mean loss ([val] val_loss): val/loss.
std::vector<Scalar> validation_scalars(double val_loss);

// The ranks' compute-time spread on a logged step (profile/straggler.hpp), in
// the same step's record: straggler/compute_min_s, straggler/compute_median_s,
// straggler/compute_max_s, straggler/slowest_rank.
struct StragglerSpread {
  double min_s = 0;
  double median_s = 0;
  double max_s = 0;
  std::int64_t slowest_rank = 0;
};
std::vector<Scalar> straggler_scalars(const StragglerSpread& s);

}  // namespace wireup::train::tensorboard
