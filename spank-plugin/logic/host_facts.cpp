#include "wireup/host_facts.hpp"

#include <algorithm>

#include "wireup/text.hpp"

namespace wireup {
namespace {

constexpr const char* kEfaLib = "/opt/amazon/efa/lib";
constexpr const char* kOfiLib = "/opt/amazon/ofi-nccl/lib";
// aws-ofi-nccl installs its tuner per architecture, older versions in lib/ itself.
const std::vector<std::string> kTuners = {
    "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so",
    "/opt/amazon/ofi-nccl/lib/aarch64-linux-gnu/libnccl-ofi-tuner.so",
    "/opt/amazon/ofi-nccl/lib/libnccl-ofi-tuner.so",
};

// Last component of a link target ("../../bus/pci/drivers/efa" -> "efa").
std::string_view basename_of(std::string_view target) {
  const auto slash = target.rfind('/');
  return slash == std::string_view::npos ? target : target.substr(slash + 1);
}

}  // namespace

const std::vector<std::string>& install_paths() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> p = {kEfaLib, kOfiLib};
    p.insert(p.end(), kTuners.begin(), kTuners.end());
    return p;
  }();
  return paths;
}

HostFacts host_facts(const HostReadings& r) {
  HostFacts h;
  h.instance_type = std::string(trim(r.product_name));
  for (const auto& dev : r.rdma_devices)
    if (basename_of(dev.driver_link) == "efa") h.efa_devices.push_back(dev.name);
  const auto present = [&r](const std::string& p) {
    return std::find(r.present.begin(), r.present.end(), p) != r.present.end();
  };
  if (present(kEfaLib)) h.efa_lib_dir = kEfaLib;
  if (present(kOfiLib)) h.ofi_nccl_lib_dir = kOfiLib;
  for (const auto& tuner : kTuners) {
    if (present(tuner)) {
      h.tuner_plugin = tuner;
      break;
    }
  }
  return h;
}

}  // namespace wireup
