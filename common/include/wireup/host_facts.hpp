#pragma once
#include <optional>
#include <string>
#include <vector>

#include "wireup/ofi_nccl_install.hpp"

namespace wireup {

// What a node offers for EFA and NCCL. Paths are as the task will see them.
struct HostFacts {
  std::string instance_type;              // DMI product_name, "" if unknown
  std::vector<std::string> efa_devices;   // /sys/class/infiniband/* bound to efa
  std::optional<bool> libfabric_efa;      // fi_getinfo(prov "efa"); nullopt: not asked
  std::string efa_lib_dir;                // /opt/amazon/efa/lib when present
  std::string ofi_nccl_lib_dir;           // aws-ofi-nccl's lib dir when present
  std::string tuner_plugin;               // libnccl-ofi-tuner.so when present
  std::string ofi_nccl_net_lib;           // libnccl-net-ofi.so or libnccl-net.so when present
  std::optional<Version> ofi_nccl_version;   // read from that library; nullopt: unknown
  std::optional<Version> libfabric_version;  // fi_version() of the libfabric asked
};

// Reads sysfs, DMI and /opt/amazon under `sysroot` ("/" in production; a fake
// tree in tests); aws-ofi-nccl under `ofi_nccl_prefix` (probe_ofi_nccl).
// Never throws: what cannot be read is simply absent.
HostFacts probe_host(const std::string& sysroot,
                     const std::string& ofi_nccl_prefix = "/opt/amazon/ofi-nccl");

}  // namespace wireup
