#pragma once
#include <cstdint>
#include <string>

#include "config/float8_recipe.hpp"
#include "config/sharding.hpp"

namespace CLI {
class App;
}

// How a run computes, and the flags that set it, declared once for train, eval
// and generate.
namespace wireup::train {

struct ComputeChoice {
  std::string device = "cpu";               // --device: cpu or cuda
  bool bf16 = false;                        // --bf16 1
  Sharding sharding = Sharding::Full;       // --sharding_strategy
  std::int64_t threads = 0;                 // --num_threads; 0: LibTorch's default
  bool activation_checkpointing = false;    // --activation_checkpointing 1
  bool prefetch = true;                     // --prefetch 0: no gather ahead
  Float8Recipe float8 = Float8Recipe::Off;  // --float8 (checked on the device at start)
};

// Which of the flags a subcommand takes: --device and --num_threads (all);
// --bf16 and --sharding_strategy (eval, train); --float8,
// --activation_checkpointing and --prefetch (train).
enum class ComputeFlags { Decode, Evaluate, Train };
void add_compute_flags(CLI::App& app, ComputeChoice& c, ComputeFlags which);

// InputError naming the flag: --num_threads outside 0..4096, --float8 without
// --device cuda --bf16 1.
void check_compute_choice(const ComputeChoice& c);

}  // namespace wireup::train
