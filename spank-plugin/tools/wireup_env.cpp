// wireup-env: the plugin's dry run. Inside an srun task it prints what
// spank_wireup gives (or would give) this task and why; with --plugstack it
// reads the admin arguments from the plugstack.conf line that loads the plugin.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "libfabric_probe.hpp"
#include "node_address.hpp"
#include "wireup/error.hpp"
#include "wireup/slurm_env.hpp"
#include "wireup/task_env.hpp"
#include "wireup/text.hpp"

namespace {

std::optional<std::string> getenv_opt(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// The key=value words after spank_wireup.so on its plugstack.conf line.
std::vector<std::string> admin_args_from(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw wireup::InputError(path + ": cannot read");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w;
    std::vector<std::string> all;
    while (words >> w) all.push_back(w);
    if (all.size() < 2 || all[0].starts_with("#")) continue;
    if (!all[1].ends_with("spank_wireup.so")) continue;
    return {all.begin() + 2, all.end()};
  }
  throw wireup::InputError(path + ": no line loads spank_wireup.so");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Print the environment spank_wireup gives this task, and why"};
  std::string plugstack, efa, nccl_debug;
  std::vector<std::string> admin_args;
  bool export_format = false;
  app.add_option("--plugstack", plugstack, "plugstack.conf to read the admin arguments from");
  app.add_option("--admin", admin_args, "admin arguments (key=value), instead of --plugstack");
  app.add_option("--wireup-efa", efa, "as the srun option: auto|on|off");
  app.add_option("--wireup-nccl-debug", nccl_debug, "as the srun option");
  app.add_flag("--export", export_format, "print only `export NAME=VALUE` lines");
  CLI11_PARSE(app, argc, argv);

  try {
    if (!plugstack.empty()) admin_args = admin_args_from(plugstack);
    const wireup::AdminConfig admin = wireup::parse_admin_args(admin_args);
    wireup::UserOptions user;
    user.wireup = true;
    if (!efa.empty()) user.efa = wireup::parse_efa_mode("--wireup-efa", efa.c_str());
    if (!nccl_debug.empty())
      user.nccl_debug = wireup::parse_nccl_debug("--wireup-nccl-debug", nccl_debug.c_str());

    auto task = wireup::task_from_slurm_env(getenv_opt);
    const auto addr = wireup::spank::node_ipv4(task.first_node, getenv_opt("SLURM_CONF"));
    task.facts.master_addr = addr.ipv4;
    task.facts.master_addr_source = addr.source;
    if (addr.ipv4.empty()) {
      const auto own = getenv_opt("MASTER_ADDR");  // as the plugin: the user's literal stands in
      if (!own || !wireup::is_ipv4_literal(*own))
        throw wireup::InputError(wireup::no_address_message(
            task.first_node, "first node of SLURM_STEP_NODELIST", addr,
            "export MASTER_ADDR=IPV4 before srun"));
      task.facts.master_addr = *own;
      task.facts.master_addr_source = "the task's own MASTER_ADDR";
    }
    wireup::HostFacts host = wireup::probe_host(admin.sysroot, admin.ofi_nccl_prefix);
    if (!host.efa_devices.empty())
      host.libfabric_efa =
          wireup::spank::libfabric_has_efa(admin.sysroot, &host.libfabric_version);

    const auto plan = wireup::plan_task(task.facts, admin, user, host, getenv_opt);
    if (export_format) {
      for (const auto& d : plan.decisions)
        if (d.action == wireup::Action::Set) std::cout << "export " << d.name << "=" << d.value << "\n";
    } else {
      std::cout << wireup::describe(plan);
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "wireup-env: " << e.what() << "\n";
    return 2;
  }
}
