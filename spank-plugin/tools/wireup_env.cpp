// wireup-env: the plugin's dry run. Inside an srun task it prints what
// spank_wireup gives (or would give) this task and why; with --plugstack it
// reads the admin arguments from the plugstack.conf line that loads the plugin.
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "host_probe.hpp"
#include "libfabric_probe.hpp"
#include "task_root.hpp"
#include "wireup/error.hpp"
#include "wireup/master_addr.hpp"
#include "wireup/plugstack_conf.hpp"
#include "wireup/shell_export.hpp"
#include "wireup/slurm_env.hpp"
#include "wireup/stderr_lines.hpp"
#include "wireup/task_env.hpp"
#include "wireup/text.hpp"
#include "wireup/version.hpp"

namespace {

std::optional<std::string> getenv_opt(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// plugstack.conf's text, never more than kPlugstackBytesMax + 1 bytes of it:
// /dev/zero, a FIFO or a huge file must not fill memory before the parser says no.
std::string read_plugstack(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw wireup::InputError(path + ": cannot open: " + std::strerror(errno));
  std::string text(wireup::kPlugstackBytesMax + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw wireup::InputError(path + ": cannot read: " + std::strerror(err));
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  return text;
}

// The job's environment as submitted, as far as a task can tell: its own,
// except the names the plugin recorded as a container image's or hook's.
wireup::EnvLookup submitted_lookup() {
  std::vector<std::string> image;
  if (const auto v = getenv_opt(wireup::kImageVar)) image = wireup::split(*v, ' ');
  return [image](const std::string& n) -> std::optional<std::string> {
    if (std::find(image.begin(), image.end(), n) != image.end()) return std::nullopt;
    return getenv_opt(n);
  };
}

}  // namespace

int main(int argc, char** argv) {
  wireup::stderr_by_whole_lines();
  CLI::App app{"Print the environment spank_wireup gives this task, and why"};
  std::string plugstack, efa, nccl_debug;
  std::vector<std::string> admin_args;
  bool export_format = false;
  app.add_option("--plugstack", plugstack, "plugstack.conf to read the admin arguments from");
  app.add_option("--admin", admin_args, "admin arguments (key=value), instead of --plugstack");
  app.add_option("--wireup-efa", efa, "as the srun option: auto|on|off");
  app.add_option("--wireup-nccl-debug", nccl_debug, "as the srun option");
  app.add_flag("--export", export_format,
               "print only `export NAME='VALUE'` lines, quoted for eval in any POSIX shell");
  app.set_version_flag("--version", std::string("wireup-env ") + wireup::kVersion);
  CLI11_PARSE(app, argc, argv);

  try {
    if (!plugstack.empty())
      admin_args = wireup::wireup_args_in_plugstack(read_plugstack(plugstack), plugstack);
    const wireup::AdminConfig admin = wireup::parse_admin_args(admin_args);
    for (const auto& w : admin.warnings) std::cerr << "wireup-env: warning: " << w << "\n";
    wireup::UserOptions user;
    user.wireup = true;
    if (!efa.empty()) user.efa = wireup::parse_efa_mode("--wireup-efa", efa.c_str());
    if (!nccl_debug.empty())
      user.nccl_debug = wireup::parse_nccl_debug("--wireup-nccl-debug", nccl_debug.c_str());

    auto task = wireup::task_from_slurm_env(getenv_opt);
    const auto m = wireup::resolve_master_addr(
        task.first_node, wireup::system_node_ipv4(task.first_node, getenv_opt("SLURM_CONF")),
        getenv_opt("MASTER_ADDR"), "export MASTER_ADDR=IPV4 before srun");
    task.facts.master_addr = m.ipv4;
    task.facts.master_addr_source = m.source;
    wireup::HostFacts host = wireup::spank::probe_host(admin.sysroot, admin.ofi_nccl_prefix);
    if (!host.efa_devices.empty())
      host.libfabric_efa = wireup::spank::libfabric_has_efa(admin.sysroot, &host.libfabric_version);

    // The container plugin's place in plugstack.conf, and the root read: this
    // process's, which inside a container is the container's.
    const std::string order = plugstack.empty()
                                  ? wireup::spank::container_order_warning(getenv_opt("SLURM_CONF"))
                                  : wireup::spank::container_order_warning_in(plugstack);
    if (!order.empty()) std::cerr << "wireup-env: " << order << "\n";
    wireup::TaskContext ctx;
    ctx.submitted = submitted_lookup();
    ctx.root_read = "this process's root (" +
                    (admin.sysroot == "/" ? std::string("/opt") : admin.sysroot + "/opt") +
                    "; run inside a container task: the container's, as the plugin reads it "
                    "when listed after the container plugin)";
    const auto plan = wireup::plan_task(task.facts, admin, user, host, getenv_opt, ctx);
    std::cout << (export_format ? wireup::export_lines(plan) : wireup::describe(plan));
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "wireup-env: " << e.what() << "\n";
    return 2;
  }
}
