#pragma once
#include <stdexcept>
#include <string>

namespace wireup {

// Raised for bad user, admin or file input. The message names the input and
// what was expected; callers at a C ABI boundary turn it into a log line.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace wireup
