#include "host_probe.hpp"

// Plain POSIX, no iostreams: this runs inside slurmstepd for every step, and
// iostreams' static initialisation alone cost more than the probe.
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>

#include "task_root.hpp"

namespace wireup::spank {
namespace {

std::string first_line(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr) return "";
  char buf[256] = {};
  const bool ok = std::fgets(buf, sizeof buf, f) != nullptr;
  std::fclose(f);
  return ok ? std::string(buf) : "";
}

bool present(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string link_target(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n <= 0 ? "" : std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

HostReadings read_host(const std::string& sysroot) {
  const std::string root = sysroot == "/" ? "" : sysroot;
  HostReadings r;
  r.product_name = first_line(root + kProductNamePath);
  const std::string ib = root + kInfinibandDir;
  if (DIR* d = ::opendir(ib.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      r.rdma_devices.push_back({name, link_target(ib + "/" + name + "/device/driver")});
    }
    ::closedir(d);
  }
  for (const auto& p : install_paths())
    if (present(root + p)) r.present.push_back(p);
  return r;
}

HostFacts probe_host(const std::string& sysroot, const std::string& ofi_nccl_prefix) {
  return with_install_trees(host_facts(read_host(sysroot)), sysroot, ofi_nccl_prefix);
}

}  // namespace wireup::spank
