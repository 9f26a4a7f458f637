#pragma once
#include <string>

#include "wireup/ofi_nccl_install.hpp"

namespace wireup::spank {

// Looks under `prefix` (default /opt/amazon/ofi-nccl) inside `sysroot` without
// loading anything: lib/ and lib/{x86_64,aarch64}-linux-gnu/, the net library
// by name, its version from the string embedded in it (first 64 MiB read in
// bounded chunks; skipped when `read_version` is false). Never throws; an
// absent install gives an empty lib_dir.
OfiNcclInstall probe_ofi_nccl(const std::string& sysroot, const std::string& prefix,
                              bool read_version = true);

}  // namespace wireup::spank
