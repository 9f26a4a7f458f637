#include "wireup/host_facts.hpp"

#include <algorithm>

#include "wireup/text.hpp"

namespace wireup {
namespace {

constexpr const char* kEfaLib = "/opt/amazon/efa/lib";
// Last component of a link target ("../../bus/pci/drivers/efa" -> "efa").
std::string_view basename_of(std::string_view target) {
  const auto slash = target.rfind('/');
  return slash == std::string_view::npos ? target : target.substr(slash + 1);
}

}  // namespace

const std::vector<std::string>& install_paths() {
  static const std::vector<std::string> paths = [] {
    return std::vector<std::string>{kEfaLib};
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
  return h;
}

}  // namespace wireup
