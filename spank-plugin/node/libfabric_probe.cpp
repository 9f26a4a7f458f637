#include "libfabric_probe.hpp"

#include <dlfcn.h>

#ifdef WIREUP_HAVE_LIBFABRIC
#include <rdma/fabric.h>

#include <cstring>
#endif

namespace wireup::spank {

#ifdef WIREUP_HAVE_LIBFABRIC
namespace {

using getinfo_fn = int (*)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**);
using dupinfo_fn = fi_info* (*)(const fi_info*);
using freeinfo_fn = void (*)(fi_info*);
using version_fn = uint32_t (*)();

void* open_libfabric(const std::string& sysroot) {
  // The EFA installer's libfabric (has the efa provider) before the distro's.
  const std::string efa = (sysroot == "/" ? "" : sysroot) + "/opt/amazon/efa/lib/libfabric.so.1";
  for (const std::string& name : {efa, std::string("libfabric.so.1")}) {
    if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

}  // namespace

std::optional<bool> libfabric_has_efa(const std::string& sysroot, std::optional<Version>* version) {
  void* lib = open_libfabric(sysroot);
  if (lib == nullptr) return std::nullopt;
  if (version != nullptr) {
    if (auto fn = reinterpret_cast<version_fn>(dlsym(lib, "fi_version"))) {
      const uint32_t v = fn();
      *version = Version{static_cast<int>(FI_MAJOR(v)), static_cast<int>(FI_MINOR(v)), 0};
    }
  }
  auto getinfo = reinterpret_cast<getinfo_fn>(dlsym(lib, "fi_getinfo"));
  auto dupinfo = reinterpret_cast<dupinfo_fn>(dlsym(lib, "fi_dupinfo"));
  auto freeinfo = reinterpret_cast<freeinfo_fn>(dlsym(lib, "fi_freeinfo"));
  std::optional<bool> found;
  if (getinfo && dupinfo && freeinfo) {
    if (fi_info* hints = dupinfo(nullptr)) {
      hints->fabric_attr->prov_name = strdup("efa");
      hints->ep_attr->type = FI_EP_RDM;
      fi_info* info = nullptr;
      const int rc = getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info);
      found = rc == 0 && info != nullptr;
      if (info) freeinfo(info);
      freeinfo(hints);
    }
  }
  dlclose(lib);
  return found;
}
#else
std::optional<bool> libfabric_has_efa(const std::string&, std::optional<Version>*) {
  return std::nullopt;
}
#endif

}  // namespace wireup::spank
