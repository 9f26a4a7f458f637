#include "comm/world_layout.hpp"

#include <cstdlib>
#include <optional>
#include <string>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::train {
namespace {

std::optional<std::string> env(const char* n) {
  const char* v = std::getenv(n);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

int need_int(const char* name, int max) {
  const auto v = env(name);
  if (!v) throw InputError(std::string(name) + " is not set, but RANK is: launch with "
                           "srun --wireup, wireup-launch or torchrun");
  const auto n = parse_uint(*v, static_cast<std::uint64_t>(max));
  if (!n) throw InputError(std::string(name) + "=" + wireup::quoted(*v) + " is not a number");
  return static_cast<int>(*n);
}

}  // namespace

WorldLayout world_from_env() {
  WorldLayout w;
  if (!env("RANK")) {
    const auto tasks = env("SLURM_STEP_NUM_TASKS");
    if (tasks && *tasks != "1")
      throw InputError("this is task " + env("SLURM_PROCID").value_or("?") + " of " + *tasks +
                       " of a Slurm step, but RANK/WORLD_SIZE are not set: add --wireup to "
                       "srun (spank_wireup) or start through wireup-launch");
    return w;  // one process, no rendezvous
  }
  w.world = need_int("WORLD_SIZE", 1 << 20);
  w.rank = need_int("RANK", 1 << 20);
  w.local_rank = env("LOCAL_RANK") ? need_int("LOCAL_RANK", 1 << 20) : 0;
  w.local_world = env("LOCAL_WORLD_SIZE") ? need_int("LOCAL_WORLD_SIZE", w.world) : 1;
  if (w.rank >= w.world) throw InputError("RANK " + std::to_string(w.rank) + " >= WORLD_SIZE");
  if (w.world > 1) {
    const auto addr = env("MASTER_ADDR");
    if (!addr || addr->empty()) throw InputError("MASTER_ADDR is not set (WORLD_SIZE > 1)");
    w.master_addr = *addr;
    w.master_port = need_int("MASTER_PORT", 65535);
  }
  return w;
}

}  // namespace wireup::train
