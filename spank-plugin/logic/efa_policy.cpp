#include "wireup/efa_policy.hpp"

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

// "ml.p5.48xlarge" and "p5.48xlarge" -> {"p5", "48xlarge"}
std::pair<std::string, std::string> family_size(std::string_view type) {
  std::string t = to_lower(trim(type));
  if (t.rfind("ml.", 0) == 0) t.erase(0, 3);
  const auto dot = t.find('.');
  if (dot == std::string::npos) return {t, ""};
  return {t.substr(0, dot), t.substr(dot + 1)};
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

bool gdr_capable(std::string_view instance_type) {
  const auto [family, size] = family_size(instance_type);
  if (family == "p4d" || family == "p4de") return true;
  if (family == "p5") return size != "4xlarge";
  if (family == "p5e" || family == "p5en") return true;
  return family.rfind("p6", 0) == 0;
}

bool wants_shm_cuda_memcpy(std::string_view instance_type) {
  const auto family = family_size(instance_type).first;
  return family == "g5" || family == "g6" || family == "g6e";
}

EfaPlan plan_efa(EfaMode mode, const HostFacts& h) {
  EfaPlan plan;
  if (mode == EfaMode::Off) {
    plan.notes.push_back("EFA variables off (efa=off)");
    return plan;
  }
  const std::string type = h.instance_type.empty() ? "unknown instance" : h.instance_type;
  if (h.efa_devices.empty()) {
    if (mode == EfaMode::On)
      throw InputError("--wireup-efa=on: EFA required, but " + type +
                       " has no EFA device in /sys/class/infiniband");
    plan.notes.push_back("no EFA device on " + type + ": FI_*/aws-ofi-nccl variables not set");
    return plan;
  }
  const std::string devs = join(h.efa_devices);
  if (h.libfabric_efa == false) {
    if (mode == EfaMode::On)
      throw InputError("--wireup-efa=on: " + type + " has EFA devices (" + devs +
                       ") but the libfabric in use has no efa provider");
    plan.notes.push_back("EFA devices " + devs +
                         " present but libfabric has no efa provider: FI_PROVIDER not set");
  } else {
    plan.entries.push_back({"FI_PROVIDER", "efa", "EFA devices " + devs});
  }
  plan.entries.push_back({"FI_EFA_FORK_SAFE", "1", "EFA present; fork-safe registration"});
  if (gdr_capable(h.instance_type))
    plan.entries.push_back(
        {"FI_EFA_USE_DEVICE_RDMA", "1", type + " supports GPUDirect RDMA read"});
  else
    plan.notes.push_back("FI_EFA_USE_DEVICE_RDMA not set: " + type +
                         " has no RDMA read (libfabric would abort)");
  if (wants_shm_cuda_memcpy(h.instance_type))
    plan.entries.push_back({"NCCL_SHM_USE_CUDA_MEMCPY", "1", type + " (g5/g6 family)"});
  if (!h.tuner_plugin.empty())
    plan.entries.push_back({"NCCL_TUNER_PLUGIN", h.tuner_plugin, "aws-ofi-nccl tuner installed"});
  else
    plan.notes.push_back("NCCL_TUNER_PLUGIN not set: aws-ofi-nccl tuner not installed");
  std::vector<std::string> lib_dirs;
  if (!h.ofi_nccl_lib_dir.empty()) lib_dirs.push_back(h.ofi_nccl_lib_dir);
  if (!h.efa_lib_dir.empty()) lib_dirs.push_back(h.efa_lib_dir);
  if (!lib_dirs.empty()) {
    std::string dirs;
    for (const auto& d : lib_dirs) dirs += (dirs.empty() ? "" : ":") + d;
    plan.entries.push_back(
        {"LD_LIBRARY_PATH", dirs, "aws-ofi-nccl / EFA libraries installed", Mode::PrependPath});
  }
  return plan;
}

}  // namespace wireup
