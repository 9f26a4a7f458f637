#include "config/compute_flags.hpp"

#include <CLI/CLI.hpp>

#include "config/command_line.hpp"
#include "wireup/error.hpp"

namespace wireup::train {
void add_compute_flags(CLI::App& app, ComputeChoice& c, ComputeFlags which) {
  app.add_option("--device", c.device, "cpu or cuda (NCCL; a CUDA LibTorch build)")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--num_threads", c.threads, "intra-op threads per rank (0: default)");
  if (which == ComputeFlags::Decode) return;
  add_switch(app, "--bf16", c.bf16, "1: bf16 compute (and, training, communication) (GPU)");
  app.add_option_function<std::string>(
         "--sharding_strategy", [&c](const std::string& v) { c.sharding = parse_sharding(v); },
         "full, hybrid or none")
      ->transform(CLI::IsMember(
          {"full", "hybrid", "none", "FULL_SHARD", "HYBRID_SHARD", "NO_SHARD"}, CLI::ignore_case));
  if (which == ComputeFlags::Evaluate) return;
  app.add_option_function<std::string>(
      "--float8", [&c](const std::string& v) { c.float8 = parse_float8_recipe(v); },
      "off, tensorwise or rowwise: the blocks' linear layers' GEMMs in float8 "
      "(GPU of compute capability 8.9+, with --bf16 1)");
  add_switch(app, "--activation_checkpointing", c.activation_checkpointing,
             "1: recompute each block in backward");
  add_switch(app, "--prefetch", c.prefetch, "1: gather the next unit during compute");
}

void check_compute_choice(const ComputeChoice& c) {
  if (c.threads < 0 || c.threads > 4096)
    throw InputError("--num_threads " + std::to_string(c.threads) +
                     ": expected 0 (LibTorch's default) or a thread count from 1 to 4096");
  if (c.float8 != Float8Recipe::Off && !(c.device == "cuda" && c.bf16))
    throw InputError(std::string("--float8 ") + float8_recipe_name(c.float8) +
                     ": float8 GEMMs need --device cuda --bf16 1");
}

}  // namespace wireup::train
