#pragma once
#include <optional>
#include <string>
#include <vector>

#include "wireup/ofi_nccl_install.hpp"

namespace wireup {

// What a node offers for EFA and NCCL. Paths are as the task will see them.
struct HostFacts {
  std::string instance_type;             // DMI product_name, "" if unknown
  std::vector<std::string> efa_devices;  // /sys/class/infiniband/* bound to efa
  std::optional<bool> libfabric_efa;     // fi_getinfo(prov "efa"); nullopt: not asked
  std::string efa_lib_dir;               // /opt/amazon/efa/lib when present
  std::string ofi_nccl_lib_dir;          // aws-ofi-nccl's lib dir when present
  std::string tuner_plugin;              // libnccl-ofi-tuner.so when present
  std::string ofi_nccl_net_lib;          // libnccl-net-ofi.so or libnccl-net.so when present
  std::optional<Version> ofi_nccl_version;   // read from that library; nullopt: unknown
  std::optional<Version> libfabric_version;  // fi_version() of the libfabric asked
};

// Where the probe looks, relative to the node's root.
inline constexpr const char* kProductNamePath = "/sys/devices/virtual/dmi/id/product_name";
inline constexpr const char* kInfinibandDir = "/sys/class/infiniband";

// An RDMA device under kInfinibandDir and the target of its device/driver link
// ("../../../bus/pci/drivers/efa"), "" when the link could not be read.
struct RdmaDevice {
  std::string name;
  std::string driver_link;
};

// What the probe read on a node, unjudged: the adapter fills it from sysfs,
// DMI and /opt/amazon/efa; host_facts() decides what it means. The aws-ofi-nccl
// install (its own prefix) is probed apart: spank::probe_ofi_nccl.
struct HostReadings {
  std::string product_name;  // first line of kProductNamePath, as read
  std::vector<RdmaDevice> rdma_devices;
  std::vector<std::string> present;  // those of install_paths() that exist
};

// The files and directories whose presence matters (absolute, as the task sees them).
const std::vector<std::string>& install_paths();

// EFA devices are those whose driver is "efa"; the EFA lib dir when present.
// The aws-ofi-nccl fields are left for the probe to fill.
HostFacts host_facts(const HostReadings& r);

}  // namespace wireup
