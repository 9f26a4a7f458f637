#include "wireup/host_facts.hpp"

// Plain POSIX, no iostreams: this runs inside slurmstepd for every step, and
// iostreams' static initialisation alone cost more than the probe.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "wireup/text.hpp"

namespace wireup {
namespace {

std::string first_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return "";
  char buf[256] = {};
  const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  return ok ? std::string(trim(buf)) : "";
}

bool present(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// Last component of a symlink's target ("../../bus/pci/drivers/efa" -> "efa").
std::string link_basename(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string target(buf, static_cast<std::size_t>(n));
  const auto slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

}  // namespace

HostFacts probe_host(const std::string& sysroot, const std::string& ofi_nccl_prefix) {
  const std::string root = sysroot == "/" ? "" : sysroot;
  HostFacts h;
  h.instance_type = first_line(root + "/sys/devices/virtual/dmi/id/product_name");

  const std::string ib = root + "/sys/class/infiniband";
  if (DIR* d = ::opendir(ib.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      if (link_basename(ib + "/" + name + "/device/driver") == "efa") h.efa_devices.push_back(name);
    }
    ::closedir(d);
  }

  if (present(root + "/opt/amazon/efa/lib")) h.efa_lib_dir = "/opt/amazon/efa/lib";
  // The version is read from the library only where EFA makes it matter.
  const OfiNcclInstall ofi = probe_ofi_nccl(sysroot, ofi_nccl_prefix, !h.efa_devices.empty());
  h.ofi_nccl_lib_dir = ofi.lib_dir;
  h.ofi_nccl_net_lib = ofi.net_lib;
  h.ofi_nccl_version = ofi.version;
  h.tuner_plugin = ofi.tuner_lib;
  return h;
}

}  // namespace wireup
