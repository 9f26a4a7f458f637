// tensorboard_write_events DIR FIRST LAST SEED: what wireup-train does with
// --tensorboard_dir, without a model: a run logging steps FIRST..LAST (a
// validation every third step) into DIR, printing the [train] and [val] lines
// of the same figures. SEED varies the figures, so a resumed run's steps
// differ from those of the run it replaces. For decode.sh.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include "config/metrics.hpp"
#include "tensorboard/event_file.hpp"
#include "tensorboard/training_scalars.hpp"

namespace tb = wireup::train::tensorboard;

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s DIR FIRST LAST SEED\n", argv[0]);
    return 2;
  }
  try {
    const std::int64_t first = std::stoll(argv[2]);
    const std::int64_t last = std::stoll(argv[3]);
    const double seed = std::stod(argv[4]);
    tb::EventFileWriter writer(argv[1], first);
    for (std::int64_t step = first; step <= last; ++step) {
      const double x = seed + static_cast<double>(step);
      wireup::train::StepMetrics m;
      m.step = step;
      m.max_steps = last;
      m.loss = 10.0 / (1.0 + 0.1 * x) + 0.001234567 * seed;
      m.lr = 3e-4 * (1.0 + std::sin(x)) + 1e-7;
      m.grad_norm = 1.0 + 0.37 * std::cos(x);
      m.tokens_per_s = 12345.6 + 17.25 * x;
      m.mfu = 0.41 + 0.001 * x;
      m.step_time_s = 0.25 + 0.0123 * x;
      m.peak_mem_mib = 412.3 + x;
      m.data_wait_s = 0.00031 * x;
      const auto record = wireup::train::step_record(m);
      writer.write_scalars(step, tb::step_scalars(record));
      std::printf("%s\n", wireup::train::format_step_line(record).c_str());
      if (step % 3 == 0) {
        const double val = m.loss + 0.05;
        writer.write_scalars(step, tb::validation_scalars(val));
        std::printf("%s\n", wireup::train::format_validation_line(step, val).c_str());
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tensorboard_write_events: %s\n", e.what());
    return 1;
  }
  return 0;
}
