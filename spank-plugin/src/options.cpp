#include "options.hpp"

#include <exception>
#include <string>

#include "plugin_state.hpp"
#include "wireup/error.hpp"

namespace wireup::spank {
namespace {

enum OptionId { kWireup = 1, kEfa, kNcclDebug, kVerbose };

int on_option(int id, const char* arg, int remote) noexcept {
  arg = option_value(arg, remote != 0);  // a bare flag as "(null)" or "" -> nullptr
  try {
    UserOptions& u = state().user;
    switch (id) {
      case kWireup:
        u.wireup = parse_on_off("--wireup", arg, true);
        break;
      case kEfa:
        u.efa = parse_efa_mode("--wireup-efa", arg);
        break;
      case kNcclDebug:
        u.nccl_debug = parse_nccl_debug("--wireup-nccl-debug", arg);
        break;
      case kVerbose:
        u.verbose = true;
        break;
      default:
        return 0;
    }
    return 0;
  } catch (const std::exception& e) {
    if (remote) {
      // Only a value that bypassed srun/sbatch (a user-set _SLURM_SPANK_OPTION_*
      // variable) gets here. Never fail inside slurmstepd: the step runs unwired
      // and wire_task tells the user on rank 0's stderr.
      state().user_error = e.what();
      slurm_error("spank_wireup: %s; wireup disabled for this step", e.what());
      return 0;
    }
    slurm_error("%s", e.what());
    return -1;  // srun/sbatch/salloc exit before anything is launched
  }
}

// The spank API takes mutable C strings.
char* c(const char* s) { return const_cast<char*>(s); }

spank_option options[] = {
    {c("wireup"), c("[on|off]"),
     c("Give each task RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR/PORT, EFA and NCCL "
       "variables (wireup)"),
     2, kWireup, on_option},
    {c("wireup-efa"), c("auto|on|off"),
     c("EFA/libfabric variables: auto (where EFA exists), on (require EFA), off"), 1, kEfa,
     on_option},
    {c("wireup-nccl-debug"), c("LEVEL"),
     c("Set NCCL_DEBUG for each task: VERSION, WARN, INFO, TRACE or off"), 1, kNcclDebug,
     on_option},
    {c("wireup-verbose"), nullptr,
     c("Print, for each task, what wireup set and why (to the task's stderr)"), 0, kVerbose,
     on_option},
};

}  // namespace

void register_options(spank_t sp) {
  for (auto& opt : options) {
    const spank_err_t rc = spank_option_register(sp, &opt);
    if (rc != ESPANK_SUCCESS)
      slurm_error("spank_wireup: cannot register --%s: %s", opt.name, spank_strerror(rc));
  }
}

}  // namespace wireup::spank
