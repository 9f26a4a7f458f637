#include "wireup/efa_policy.hpp"

#include <cctype>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

// Sources: aws-ofi-nccl src/platform-aws.cpp (gdr_required per platform);
// Amazon EC2 User Guide, accelerated computing instance specifications
// (accelerators, EFA network cards). Unrecorded counts stay 0.
constexpr InstanceInfo kInstances[] = {
    {"p3dn", "24xlarge", 8, "V100", 1, false, false},
    {"p4d", "24xlarge", 8, "A100", 4, true, false},
    {"p4de", "24xlarge", 8, "A100 80GB", 4, true, false},
    {"p5", "4xlarge", 1, "H100", 0, false, false},
    {"p5", "48xlarge", 8, "H100", 32, true, false},
    {"p5e", "48xlarge", 8, "H200", 32, true, false},
    {"p5en", "48xlarge", 8, "H200", 16, true, false},
    {"p6-b200", "48xlarge", 8, "B200", 8, true, false},
    {"p6-b300", "48xlarge", 8, "B300", 0, true, false},
    {"g5", "48xlarge", 8, "A10G", 1, false, true},
    {"g5", "", 0, "A10G", 0, false, true},
    {"g6", "48xlarge", 8, "L4", 1, false, true},
    {"g6", "", 0, "L4", 0, false, true},
    {"g6e", "48xlarge", 8, "L40S", 4, false, true},
    {"g6e", "", 0, "L40S", 0, false, true},
    {"trn1", "32xlarge", 16, "Trainium", 8, true, false},
    {"trn1n", "32xlarge", 16, "Trainium", 16, true, false},
    {"trn2", "48xlarge", 16, "Trainium2", 16, true, false},
    {"trn2", "", 0, "Trainium2", 0, true, false},
};

// "ml.p5.48xlarge" and "p5.48xlarge" -> {"p5", "48xlarge"}
std::pair<std::string, std::string> family_size(std::string_view type) {
  std::string t = to_lower(trim(type));
  if (t.rfind("ml.", 0) == 0) t.erase(0, 3);
  const auto dot = t.find('.');
  if (dot == std::string::npos) return {t, ""};
  return {t.substr(0, dot), t.substr(dot + 1)};
}

// aws-ofi-nccl's "p-series" rule: p6 and every later p generation.
bool later_p_series(const std::string& family) {
  return family.size() >= 2 && family[0] == 'p' &&
         std::isdigit(static_cast<unsigned char>(family[1])) &&
         (family[1] >= '6' ||
          (family.size() >= 3 && std::isdigit(static_cast<unsigned char>(family[2]))));
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

bool at_least(const std::optional<Version>& v, Version min) { return v && *v >= min; }
bool below(const std::optional<Version>& v, Version limit) { return v && *v < limit; }

}  // namespace

const InstanceInfo* instance_info(std::string_view instance_type) {
  const auto [family, size] = family_size(instance_type);
  for (const auto& i : kInstances)
    if (i.family == family && (i.size.empty() || i.size == size)) return &i;
  return nullptr;
}

bool gdr_capable(std::string_view instance_type) {
  if (const InstanceInfo* i = instance_info(instance_type)) return i->gdr;
  const auto family = family_size(instance_type).first;
  return later_p_series(family) || family.rfind("trn", 0) == 0;
}

bool wants_shm_cuda_memcpy(std::string_view instance_type) {
  const InstanceInfo* i = instance_info(instance_type);
  return i != nullptr && i->shm_cuda_memcpy;
}

namespace {

// The aws-ofi-nccl install as the rules see it. aws-ofi-nccl's own
// documentation (doc/efa-env-var.md) decides by version. A libnccl-net-ofi.so
// whose version string cannot be read is at least 1.15 (the release that
// renamed it); an install of unknown version otherwise keeps the rules for old
// ones.
struct OfiInstall {
  bool named = false;  // libnccl-net-ofi.so (1.15+)
  std::optional<Version> version;
  std::string name;     // for the notes
  bool legacy = false;  // <= 1.5, or unknown
};

OfiInstall judge_ofi(const HostFacts& h) {
  OfiInstall o;
  o.named = h.ofi_nccl_net_lib.ends_with("/libnccl-net-ofi.so");
  o.version = h.ofi_nccl_version
                  ? h.ofi_nccl_version
                  : (o.named ? std::optional<Version>(Version{1, 15, 0}) : std::nullopt);
  o.name = h.ofi_nccl_version           ? "aws-ofi-nccl " + h.ofi_nccl_version->str()
           : o.named                    ? "aws-ofi-nccl >= 1.15 (libnccl-net-ofi.so)"
           : h.ofi_nccl_net_lib.empty() ? "no aws-ofi-nccl"
                                        : "aws-ofi-nccl of unknown version";
  o.legacy = !o.version || below(o.version, {1, 6, 0});
  return o;
}

// FI_PROVIDER, NCCL_PROTO, FI_EFA_FORK_SAFE.
void plan_provider(EfaMode mode, const HostFacts& h, const std::string& type,
                   const std::string& devs, const OfiInstall& ofi, EfaPlan& plan) {
  if (h.libfabric_efa == false) {
    if (mode == EfaMode::On)
      throw InputError("--wireup-efa=on: " + type + " has EFA devices (" + devs +
                       ") but the libfabric in use has no efa provider");
    plan.notes.push_back("EFA devices " + devs +
                         " present but libfabric has no efa provider: FI_PROVIDER not set");
  } else if (ofi.legacy) {
    plan.entries.push_back({"FI_PROVIDER", "efa", "EFA devices " + devs + "; " + ofi.name});
  } else {
    plan.notes.push_back("FI_PROVIDER not set: " + ofi.name + " selects the efa provider itself");
  }
  if (below(ofi.version, {1, 6, 0}))
    plan.entries.push_back({"NCCL_PROTO", "simple", ofi.name + " (<= 1.5) needs it"});
  if (ofi.legacy)
    plan.entries.push_back({"FI_EFA_FORK_SAFE", "1", "EFA present; " + ofi.name});
  else
    plan.notes.push_back("FI_EFA_FORK_SAFE not set: " + ofi.name + " sets it itself");
}

// FI_EFA_USE_DEVICE_RDMA, NCCL_SHM_USE_CUDA_MEMCPY.
void plan_rdma(const HostFacts& h, const std::string& type, const OfiInstall& ofi, EfaPlan& plan) {
  const auto& lf = h.libfabric_version;
  const std::string lf_name =
      lf ? "libfabric " + std::to_string(lf->major) + "." + std::to_string(lf->minor)
         : "libfabric of unknown version";
  if (!gdr_capable(h.instance_type)) {
    plan.notes.push_back("FI_EFA_USE_DEVICE_RDMA not set: " + type +
                         " has no RDMA read (libfabric would abort)");
  } else if (at_least(ofi.version, {1, 7, 0}) && at_least(lf, {1, 18, 0})) {
    plan.notes.push_back("FI_EFA_USE_DEVICE_RDMA not set: " + ofi.name + " with " + lf_name +
                         " uses RDMA read by default");
  } else {
    plan.entries.push_back({"FI_EFA_USE_DEVICE_RDMA", "1",
                            type + " supports GPUDirect RDMA read; " + ofi.name + ", " + lf_name});
  }
  if (wants_shm_cuda_memcpy(h.instance_type))
    plan.entries.push_back({"NCCL_SHM_USE_CUDA_MEMCPY", "1", type + " (g5/g6 family)"});
}

// NCCL_NET_PLUGIN, NCCL_TUNER_PLUGIN, LD_LIBRARY_PATH.
void plan_plugins(const HostFacts& h, const OfiInstall& ofi, EfaPlan& plan) {
  // From 1.15 the library is libnccl-net-ofi.so, which NCCL loads by the name "ofi".
  if (ofi.named)
    plan.entries.push_back({"NCCL_NET_PLUGIN", "ofi", h.ofi_nccl_net_lib + " installed"});
  if (at_least(ofi.version, {1, 16, 0}))
    plan.notes.push_back("NCCL_TUNER_PLUGIN not set: " + ofi.name + " configures its own tuner");
  else if (!h.tuner_plugin.empty())
    plan.entries.push_back({"NCCL_TUNER_PLUGIN", h.tuner_plugin, "aws-ofi-nccl tuner installed"});
  else
    plan.notes.push_back("NCCL_TUNER_PLUGIN not set: aws-ofi-nccl tuner not installed");

  std::string dirs;
  for (const auto* d : {&h.ofi_nccl_lib_dir, &h.efa_lib_dir})
    if (!d->empty()) dirs += (dirs.empty() ? "" : ":") + *d;
  if (!dirs.empty())
    plan.entries.push_back(
        {"LD_LIBRARY_PATH", dirs, "aws-ofi-nccl / EFA libraries installed", Mode::PrependPath});
}

}  // namespace

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
  if (const InstanceInfo* i = instance_info(h.instance_type);
      i && i->efa_devices > static_cast<int>(h.efa_devices.size()))
    plan.notes.push_back(type + " has " + std::to_string(i->efa_devices) + " EFA devices; " +
                         std::to_string(h.efa_devices.size()) + " seen (" + devs + ")");
  const OfiInstall ofi = judge_ofi(h);
  plan_provider(mode, h, type, devs, ofi, plan);
  plan_rdma(h, type, ofi, plan);
  plan_plugins(h, ofi, plan);
  return plan;
}

}  // namespace wireup
