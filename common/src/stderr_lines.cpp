#include "wireup/stderr_lines.hpp"

#include <cstdio>
#include <iostream>

namespace wireup {

void stderr_by_whole_lines() {
  static char buffer[64 * 1024];
  // Only valid before the first output on stderr; a failure leaves stderr as it was.
  if (std::setvbuf(stderr, buffer, _IOLBF, sizeof buffer) == 0) {
    std::cerr.unsetf(std::ios::unitbuf);
  }
}

}  // namespace wireup
