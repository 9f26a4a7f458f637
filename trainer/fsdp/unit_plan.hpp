#pragma once
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
};

}  // namespace wireup::train
