#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace wireup::train {

// One parameter of a unit: its name and shape, in the order the unit's flat
// buffer holds them.
struct ParamSpec {
  std::string name;
  std::vector<std::int64_t> shape;
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

}  // namespace wireup::train
