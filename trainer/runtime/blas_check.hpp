#pragma once
#include <string>

namespace wireup::train {

// The BLAS library this process really loaded (Debian's LibTorch calls
// whatever libblas.so.3 the system alternative points to), and whether it is
// the netlib reference implementation (~50x slower GEMM than OpenBLAS).
struct BlasInfo {
  std::string path;
  bool reference = false;
};
BlasInfo loaded_blas();

}  // namespace wireup::train
