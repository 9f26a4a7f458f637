#include "wireup/host_facts.hpp"

#include <filesystem>
#include <fstream>
#include <system_error>

#include "wireup/text.hpp"

namespace fs = std::filesystem;

namespace wireup {
namespace {

std::string first_line(const fs::path& p) {
  std::ifstream in(p);
  std::string line;
  if (in) std::getline(in, line);
  return std::string(trim(line));
}

// "/opt/x" under sysroot "/tmp/fake" -> "/tmp/fake/opt/x"
fs::path under(const std::string& sysroot, const std::string& abs) {
  return fs::path(sysroot) / abs.substr(1);
}

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

}  // namespace

HostFacts probe_host(const std::string& sysroot) {
  HostFacts h;
  h.instance_type = first_line(under(sysroot, "/sys/devices/virtual/dmi/id/product_name"));

  std::error_code ec;
  for (fs::directory_iterator it(under(sysroot, "/sys/class/infiniband"), ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code lec;
    const auto driver = fs::read_symlink(it->path() / "device" / "driver", lec);
    if (!lec && driver.filename() == "efa") h.efa_devices.push_back(it->path().filename());
  }

  if (present(under(sysroot, "/opt/amazon/efa/lib"))) h.efa_lib_dir = "/opt/amazon/efa/lib";
  const std::string ofi = "/opt/amazon/ofi-nccl/lib";
  if (present(under(sysroot, ofi))) h.ofi_nccl_lib_dir = ofi;
  for (const char* sub : {"/x86_64-linux-gnu", "/aarch64-linux-gnu", ""}) {
    const std::string tuner = ofi + sub + "/libnccl-ofi-tuner.so";
    if (present(under(sysroot, tuner))) {
      h.tuner_plugin = tuner;
      break;
    }
  }
  return h;
}

}  // namespace wireup
