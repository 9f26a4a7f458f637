#pragma once
#include <chrono>
#include <cstdint>
#include <ostream>

namespace wireup::prep {

// Progress lines on long runs: on a terminal one line rewritten every second;
// in a log (e.g. a Slurm output file) a new line every 30 s. Silent for runs
// shorter than the interval.
class Progress {
 public:
  Progress(std::ostream& out, bool enabled, bool terminal, std::uint64_t total_bytes);
  void update(const char* phase, std::uint64_t bytes, std::uint64_t documents,
              std::uint64_t tokens);
  void done();  // ends a rewritten line

 private:
  std::ostream& out_;
  bool enabled_;
  bool terminal_;
  bool printed_ = false;
  std::uint64_t total_;
  const char* phase_ = nullptr;  // rates are per phase (sampling, tokenizing)
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace wireup::prep
