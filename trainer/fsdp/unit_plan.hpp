#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "fsdp/param_spec.hpp"

namespace wireup::train {

// One FSDP unit as a model hands it to the sharding engine (FsdpModel): its
// parameters, and what the engine must know of its computation to schedule
// gathers and recomputation. The model says what each unit computes; the
// engine never does.
struct UnitPlan {
  std::string name;              // "embedding", "block0", ..., "head"
  std::vector<ParamSpec> specs;  // in the unit's flat-buffer order
  // Another unit whose parameters this one computes with after its own (a
  // tied head: the embedding's matrix), gathered with it; its gradient from
  // this use is added to that unit's. -1: none.
  int borrows = -1;
  // Whether --activation_checkpointing recomputes this unit in backward (the
  // blocks; recomputing an embedding or a head saves little).
  bool recompute = false;
  // Whether its backward reads its parameters (an embedding's is a scatter:
  // it is not regathered, nor gathered ahead for backward).
  bool backward_reads_params = true;
  // Whether its parameters are trained. A frozen unit (a base under LoRA)
  // keeps no gradient shard and no optimizer moments; its backward computes
  // its input's gradient only.
  bool trainable = true;
  // Whether the engine runs it in the forward order. A held unit (a block's
  // LoRA adapters) computes nothing itself: the unit that borrows it
  // computes with its parameters, and its gradient is that unit's.
  bool runs = true;
  // The decoder layer it computes (a block; LoRA adapts it), -1 for none.
  std::int64_t layer = -1;
};

}  // namespace wireup::train
