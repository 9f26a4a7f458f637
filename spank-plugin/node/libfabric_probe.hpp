#pragma once
#include <optional>
#include <string>

#include "wireup/ofi_nccl_install.hpp"

namespace wireup::spank {

// Asks libfabric whether its efa provider works here. libfabric is opened
// only when called (only on nodes whose sysfs shows EFA devices), so srun
// and slurmd never load it. nullopt: libfabric itself is not available.
// `version`, when given, receives fi_version() of the library asked.
std::optional<bool> libfabric_has_efa(const std::string& sysroot,
                                      std::optional<Version>* version = nullptr);

}  // namespace wireup::spank
