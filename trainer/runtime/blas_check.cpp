#include "runtime/blas_check.hpp"

#include <link.h>

#include <climits>
#include <cstdlib>
#include <cstring>

namespace wireup::train {

BlasInfo loaded_blas() {
  BlasInfo info;
  dl_iterate_phdr(
      [](dl_phdr_info* i, size_t, void* out) {
        if (i->dlpi_name && std::strstr(i->dlpi_name, "libblas.so")) {
          char real[PATH_MAX];
          auto* b = static_cast<BlasInfo*>(out);
          b->path = realpath(i->dlpi_name, real) ? real : i->dlpi_name;
          return 1;
        }
        return 0;
      },
      &info);
  // Debian installs the reference BLAS under .../blas/, OpenBLAS under .../openblas-*/.
  info.reference = info.path.find("/blas/libblas") != std::string::npos;
  return info;
}

}  // namespace wireup::train
