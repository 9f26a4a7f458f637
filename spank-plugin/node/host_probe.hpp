#pragma once
#include <string>

#include "wireup/host_facts.hpp"

namespace wireup::spank {

// Reads DMI, /sys/class/infiniband and /opt/amazon under `sysroot` ("/" in
// production; a fake tree in tests). Never throws: what cannot be read is
// simply absent.
HostReadings read_host(const std::string& sysroot);

// read_host, judged by host_facts(), with the aws-ofi-nccl install under
// `ofi_nccl_prefix` (probe_ofi_nccl; its version read only on EFA nodes).
HostFacts probe_host(const std::string& sysroot,
                     const std::string& ofi_nccl_prefix = "/opt/amazon/ofi-nccl");

}  // namespace wireup::spank
