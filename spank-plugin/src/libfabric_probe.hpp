#pragma once
#include <optional>
#include <string>

namespace wireup::spank {

// Asks libfabric whether its efa provider works here. libfabric is opened
// only when called (only on nodes whose sysfs shows EFA devices), so srun
// and slurmd never load it. nullopt: libfabric itself is not available.
std::optional<bool> libfabric_has_efa(const std::string& sysroot);

}  // namespace wireup::spank
