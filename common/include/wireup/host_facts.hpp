#pragma once
#include <optional>
#include <string>
#include <vector>

namespace wireup {

// What a node offers for EFA and NCCL. Paths are as the task will see them.
struct HostFacts {
  std::string instance_type;              // DMI product_name, "" if unknown
  std::vector<std::string> efa_devices;   // /sys/class/infiniband/* bound to efa
  std::optional<bool> libfabric_efa;      // fi_getinfo(prov "efa"); nullopt: not asked
  std::string efa_lib_dir;                // /opt/amazon/efa/lib when present
  std::string ofi_nccl_lib_dir;           // aws-ofi-nccl's lib dir when present
  std::string tuner_plugin;               // libnccl-ofi-tuner.so when present
};

// Reads sysfs, DMI and /opt/amazon under `sysroot` ("/" in production; a fake
// tree in tests). Never throws: what cannot be read is simply absent.
HostFacts probe_host(const std::string& sysroot);

}  // namespace wireup
