#pragma once
#include <cstdint>
#include <vector>

#include "config/metrics.hpp"
#include "tensorboard/event_records.hpp"

// The tags wireup-train writes: one per figure of the [train] and [val]
// lines, named after the line's key, so a chart and a log line read alike.
namespace wireup::train::tensorboard {

// A logged step's figures, each under its record's tag (config/metrics.hpp's
// step_record): train/loss, train/lr, ..., train/data_wait_s, and where
// measured train/trained_tokens and straggler/slowest_rank,
// straggler/compute_min_s, straggler/compute_median_s, straggler/compute_max_s.
std::vector<Scalar> step_scalars(const StepRecord& r);

// A validation's mean loss ([val] val_loss): val/loss.
std::vector<Scalar> validation_scalars(double val_loss);

}  // namespace wireup::train::tensorboard
