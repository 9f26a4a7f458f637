#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/env_plan.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/sweep_budget.hpp"

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
  std::vector<EnvEntry> extra;                           // setenv= (IfUnset) and forceenv= (Force)
  // memory_snapshot_dirs=: where the job epilog removes a finished job's memory snapshots
  // (DIR/wireup-JOBID, wireup-train's default --memory_checkpoint_dir); empty: off.
  std::vector<std::string> memory_snapshot_dirs{"/dev/shm"};
  // memory_snapshot_max_entries=, _max_name_bytes=, _max_seconds=: one sweep's budget.
  SweepLimits memory_snapshot_limits;
  std::vector<std::string> warnings;  // a key given twice (the last one wins)
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

// The value a spank option callback got, as the parsers below take it: nullptr
// for a bare flag. Slurm hands a bare flag to the job's steps as "(null)"
// (sbatch's SLURM_SPANK_* job variables) or, in slurmstepd (remote), as ""
// (_SLURM_SPANK_OPTION_* variables); on a command line "" is `--wireup=`.
const char* option_value(const char* arg, bool remote);

// Parsers for one option value each (value is null for a bare flag; "" is an
// error). Values are cut to kShownValueMax bytes in messages.
inline constexpr std::size_t kShownValueMax = 64;
bool parse_on_off(std::string_view option, const char* value, bool bare_means);
EfaMode parse_efa_mode(std::string_view option, const char* value);
std::string parse_nccl_debug(std::string_view option, const char* value);  // "" = off

// Enabled when the user says so, or the admin default is on and the user
// did not say off. A --wireup-* sub-option implies --wireup.
bool wireup_enabled(const AdminConfig& admin, const UserOptions& user);

const char* efa_mode_name(EfaMode m);

}  // namespace wireup
