#include "hf_export.hpp"

#include <cstdio>

namespace wireup::train {

int run_export(int, char**) {
  std::fprintf(stderr, "wireup-train export: not implemented yet\n");
  return 2;
}

}  // namespace wireup::train
