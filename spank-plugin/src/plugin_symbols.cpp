// The plugin's C ABI: Slurm dlsym()s these names. Each entry point catches
// everything, so no exception ever unwinds into Slurm.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "job_epilog.hpp"
#include "options.hpp"
#include "plugin_state.hpp"
#include "remote_task.hpp"
#include "spank_api.hpp"
#include "wireup/error.hpp"
#include "wireup/rendezvous.hpp"

// Built with hidden visibility; only these names are Slurm's to see.
#define WIREUP_EXPORT __attribute__((visibility("default")))

extern "C" {
// SPANK_PLUGIN() would give these internal linkage under C++.
WIREUP_EXPORT extern const char plugin_name[] = "wireup";
WIREUP_EXPORT extern const char plugin_type[] = "spank";
WIREUP_EXPORT extern const unsigned int plugin_version = SLURM_VERSION_NUMBER;
#ifdef WIREUP_SPANK_FAILURE_MODE
// Slurm 25.05+: should a callback ever fail, the job fails, never the node
// (the plugin already returns 0 from init and user_init; this makes it explicit).
WIREUP_EXPORT int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
#endif
}

namespace {

using wireup::spank::state;

template <typename F>
int guarded(const char* where, int on_exception, F&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    slurm_error("spank_wireup: %s: %s", where, e.what());
  } catch (...) {
    slurm_error("spank_wireup: %s: unknown error", where);
  }
  return on_exception;
}

// The kernel's ephemeral range; Linux's default when unreadable.
std::pair<std::uint32_t, std::uint32_t> ephemeral_ports() {
  unsigned lo = 32768, hi = 60999;
  if (std::FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "re")) {
    if (std::fscanf(f, "%u %u", &lo, &hi) != 2) lo = 32768, hi = 60999;
    std::fclose(f);
  }
  return {lo, hi};
}

void load_admin_config(int ac, char** av) {
  auto& s = state();
  try {
    s.admin = wireup::parse_admin_args(std::vector<std::string>(av, av + ac));
    const auto [lo, hi] = ephemeral_ports();
    if (auto why = wireup::check_port_policy(s.admin->ports, lo, hi))
      throw wireup::InputError("plugstack.conf port_base/port_range: " + *why);
  } catch (const std::exception& e) {
    s.admin.reset();
    s.admin_error = e.what();
  }
}

// Slurm runs a job script's callbacks without init: the admin arguments are read
// here. Bad ones were logged when slurmd started; here they only disable the callback.
template <typename F>
int job_script(const char* where, int ac, char** av, F&& body) noexcept {
  return guarded(where, 0, [&] {
    wireup::AdminConfig admin;
    try {
      admin = wireup::parse_admin_args(std::vector<std::string>(av, av + ac));
    } catch (const wireup::InputError& e) {
      slurm_debug("spank_wireup: %s: disabled: %s", where, e.what());
      return 0;
    }
    body(admin);
    return 0;
  });
}

}  // namespace

extern "C" {

WIREUP_EXPORT int slurm_spank_init(spank_t sp, int ac, char** av) {
  return guarded("init", 0, [&] {
    load_admin_config(ac, av);
    const spank_context_t ctx = spank_context();
    if (state().admin && ctx == S_CTX_SLURMD) {
      for (const auto& w : state().admin->warnings)
        slurm_info("spank_wireup: warning: %s", w.c_str());
    }
    if (!state().admin) {
      // slurmd logs it once at start; steps only at debug level.
      if (ctx == S_CTX_SLURMD)
        slurm_error("spank_wireup: %s; wireup is disabled on this node",
                    state().admin_error.c_str());
      else
        slurm_debug("spank_wireup: disabled: %s", state().admin_error.c_str());
    }
    if (ctx == S_CTX_LOCAL || ctx == S_CTX_ALLOCATOR || ctx == S_CTX_REMOTE)
      wireup::spank::register_options(sp);
    return 0;
  });
}

WIREUP_EXPORT int slurm_spank_init_post_opt(spank_t sp, int, char**) {
  return guarded("init_post_opt", 0, [&] {
    const auto& s = state();
    if (!spank_remote(sp) && !s.admin && s.user.wireup.value_or(false))
      slurm_error("spank_wireup: --wireup has no effect: %s", s.admin_error.c_str());
    return 0;
  });
}

WIREUP_EXPORT int slurm_spank_user_init(spank_t sp, int, char**) {
  return guarded("user_init", 0, [&] {
    wireup::spank::prepare_step(sp);
    return 0;
  });
}

WIREUP_EXPORT int slurm_spank_task_init(spank_t sp, int, char**) {
  return guarded("task_init", 0, [&] { return wireup::spank::wire_task(sp); });
}

// Before any task of the job: its memory snapshot directory, made for its user.
WIREUP_EXPORT int slurm_spank_job_prolog(spank_t sp, int ac, char** av) {
  return job_script("job_prolog", ac, av, [&](const wireup::AdminConfig& admin) {
    wireup::spank::prepare_memory_snapshots(sp, admin);
  });
}

WIREUP_EXPORT int slurm_spank_job_epilog(spank_t sp, int ac, char** av) {
  return job_script("job_epilog", ac, av, [&](const wireup::AdminConfig& admin) {
    wireup::spank::sweep_memory_snapshots(sp, admin);
  });
}

}  // extern "C"
