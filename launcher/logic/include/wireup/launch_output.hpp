#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/launch_options.hpp"

namespace wireup {

// Where one worker's stream goes (agent mode).
struct StreamRoute {
  bool console = true;  // the agent's own stdout/stderr
  bool file = false;    // --log-dir/attempt_N/RANK/{stdout,stderr}.log
};
// stream is kStdout or kStderr.
StreamRoute route_stream(const LaunchOptions& o, unsigned stream, std::uint32_t local_rank);

// Prefixes every complete line with `prefix`; holds a partial line until its
// newline (or flush) so lines of different ranks never interleave mid-line.
class LinePrefixer {
 public:
  explicit LinePrefixer(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string feed(std::string_view bytes);
  std::string flush();  // the pending partial line, newline-terminated

 private:
  std::string prefix_;
  std::string partial_;
};

}  // namespace wireup
