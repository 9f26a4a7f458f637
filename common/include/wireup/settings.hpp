#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/env_plan.hpp"
#include "wireup/rendezvous.hpp"

namespace wireup {

enum class EfaMode { Auto, On, Off };

// From plugstack.conf: `required spank_wireup.so default=on efa=auto ...`.
struct AdminConfig {
  bool default_on = false;
  EfaMode efa = EfaMode::Auto;
  PortPolicy ports;
  std::string nccl_socket_ifname;  // empty: leave NCCL's own choice
  std::string nccl_debug;          // empty: unset
  bool omp_threads = true;         // OMP_NUM_THREADS when several tasks share a node
  std::string sysroot = "/";       // where /sys and /opt are read (test seam)
  std::string ofi_nccl_prefix = "/opt/amazon/ofi-nccl";  // aws-ofi-nccl install tree
  std::vector<EnvEntry> extra;     // setenv= (IfUnset) and forceenv= (Force)
};

// Throws InputError naming the argument and the accepted values; unknown keys
// are errors too, so a typo never silently changes behaviour.
AdminConfig parse_admin_args(const std::vector<std::string>& args);

// The text `--help` and the docs show for admin keys.
std::string admin_args_help();

// What a user asked for on srun/sbatch/salloc. nullopt: not given.
struct UserOptions {
  std::optional<bool> wireup;
  std::optional<EfaMode> efa;
  std::optional<std::string> nccl_debug;  // "" means --wireup-nccl-debug=off
  bool verbose = false;
};

// Parsers for one option value each (value may be null for a bare flag).
bool parse_on_off(std::string_view option, const char* value, bool bare_means);
EfaMode parse_efa_mode(std::string_view option, const char* value);
std::string parse_nccl_debug(std::string_view option, const char* value);  // "" = off

// Enabled when the user says so, or the admin default is on and the user
// did not say off. A --wireup-* sub-option implies --wireup.
bool wireup_enabled(const AdminConfig& admin, const UserOptions& user);

const char* efa_mode_name(EfaMode m);

}  // namespace wireup
