#include "task_root.hpp"

#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <exception>

#include "ofi_nccl_probe.hpp"
#include "wireup/master_addr.hpp"
#include "wireup/plugstack_conf.hpp"

namespace wireup::spank {
namespace {

constexpr std::size_t kSlurmConfMax = 16u << 20;

bool present(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// A regular file's text, if it has at most `max` bytes (a FIFO or device is
// never read: opened non-blocking and checked on the descriptor).
std::optional<std::string> text_of(const std::string& path, std::size_t max) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<std::string> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) <= max) {
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
    out = std::move(text);
  }
  ::close(fd);
  return out;
}

// The files an include pattern names, in glob's (collation) order, as Slurm loads them.
std::vector<std::string> included(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i)
      if (auto t = text_of(g.gl_pathv[i], kPlugstackBytesMax)) out.push_back(std::move(*t));
  }
  ::globfree(&g);
  return out;
}

}  // namespace

std::uint64_t mount_namespace_id() {
  struct stat st {};
  return ::stat("/proc/self/ns/mnt", &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

HostFacts with_install_trees(HostFacts h, const std::string& sysroot,
                             const std::string& ofi_nccl_prefix) {
  const std::string root = sysroot == "/" ? "" : sysroot;
  HostReadings r;
  for (const auto& p : install_paths())
    if (present(root + p)) r.present.push_back(p);
  h.efa_lib_dir = host_facts(r).efa_lib_dir;
  const OfiNcclInstall ofi = probe_ofi_nccl(sysroot, ofi_nccl_prefix, !h.efa_devices.empty());
  h.ofi_nccl_lib_dir = ofi.lib_dir;
  h.ofi_nccl_net_lib = ofi.net_lib;
  h.ofi_nccl_version = ofi.version;
  h.tuner_plugin = ofi.tuner_lib;
  return h;
}

std::string container_order_warning_in(const std::string& plugstack) {
  const auto text = text_of(plugstack, kPlugstackBytesMax);
  if (!text) return "";
  try {
    if (const auto c = container_after_wireup(*text, plugstack, included))
      return order_warning(*c, plugstack);
  } catch (const std::exception&) {
  }
  return "";
}

std::string container_order_warning(const std::optional<std::string>& task_slurm_conf) {
  const char* own = std::getenv("SLURM_CONF");
  for (const auto& conf : slurm_conf_candidates(
           task_slurm_conf, own ? std::optional<std::string>(own) : std::nullopt)) {
    if (const auto text = text_of(conf, kSlurmConfMax))
      return container_order_warning_in(plugstack_path_for(*text, conf));
  }
  return "";
}

}  // namespace wireup::spank
