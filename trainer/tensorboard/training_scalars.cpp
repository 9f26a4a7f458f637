#include "tensorboard/training_scalars.hpp"

namespace wireup::train::tensorboard {

std::vector<Scalar> step_scalars(const StepMetrics& m) {
  return {
      {"train/loss", m.loss},
      {"train/lr", m.lr},
      {"train/grad_norm", m.grad_norm},
      {"train/tokens_per_s", m.tokens_per_s},
      {"train/mfu", m.mfu},
      {"train/step_time_s", m.step_time_s},
      {"train/peak_mem_mib", m.peak_mem_mib},
      {"train/data_wait_s", m.data_wait_s},
  };
}

std::vector<Scalar> validation_scalars(double val_loss) { return {{"val/loss", val_loss}}; }

std::vector<Scalar> straggler_scalars(const StragglerSpread& s) {
  return {
      {"straggler/compute_min_s", s.min_s},
      {"straggler/compute_median_s", s.median_s},
      {"straggler/compute_max_s", s.max_s},
      {"straggler/slowest_rank", static_cast<double>(s.slowest_rank)},
  };
}

}  // namespace wireup::train::tensorboard
