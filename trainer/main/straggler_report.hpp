#pragma once
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "profile/straggler.hpp"

// The straggler report over the world group: at start every rank's host, on
// each logged step every rank's compute time (one all-gather of one float),
// judged by StragglerRule on every rank alike; rank 0 prints the warnings.
namespace wireup::train {

class StragglerReport {
 public:
  // A collective: every rank's host name (one all-gather of 64 values each).
  StragglerReport(Comm& world, at::Device device, const std::string& my_host, double ratio,
                  std::int64_t steps);
  struct Step {
    ComputeSpread spread;
    std::vector<std::string> warnings;  // format_straggler_warning's lines
  };
  // A collective, on every rank on the same steps: this rank's compute time in.
  Step logged_step(std::int64_t step, double my_compute_s);
  const std::vector<std::string>& hosts() const { return hosts_; }

 private:
  Comm& world_;
  at::Device device_;
  std::vector<std::string> hosts_;
  StragglerRule rule_;
};

}  // namespace wireup::train
