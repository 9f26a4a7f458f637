#include "tensorboard/training_scalars.hpp"

namespace wireup::train::tensorboard {

std::vector<Scalar> step_scalars(const StepRecord& r) {
  std::vector<Scalar> out;
  for (const StepFigure& f : r.figures) out.push_back({f.tag, f.value});
  return out;
}

std::vector<Scalar> validation_scalars(double val_loss) { return {{"val/loss", val_loss}}; }

}  // namespace wireup::train::tensorboard
