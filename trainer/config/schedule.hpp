#pragma once
#include <cstdint>

namespace wireup::train {

// Linear warmup from lr/warmup to lr, then cosine decay to min_lr at
// max_steps. `step` counts from 1 (the step about to be taken).
double learning_rate(double lr, double min_lr, std::int64_t warmup_steps, std::int64_t max_steps,
                     std::int64_t step);

}  // namespace wireup::train
