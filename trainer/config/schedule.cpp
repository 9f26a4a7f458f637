#include "config/schedule.hpp"

#include <algorithm>
#include <cmath>

namespace wireup::train {

double learning_rate(double lr, double min_lr, std::int64_t warmup, std::int64_t max_steps,
                     std::int64_t step) {
  if (warmup > 0 && step <= warmup)
    return lr * static_cast<double>(step) / static_cast<double>(warmup);
  const std::int64_t span = std::max<std::int64_t>(1, max_steps - warmup);
  const double progress =
      std::clamp(static_cast<double>(step - warmup) / static_cast<double>(span), 0.0, 1.0);
  return min_lr + 0.5 * (lr - min_lr) * (1.0 + std::cos(M_PI * progress));
}

}  // namespace wireup::train
