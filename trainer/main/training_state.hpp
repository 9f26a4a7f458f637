#pragma once
#include <vector>

#include "checkpoint/checkpointer.hpp"
#include "fsdp/flat_unit.hpp"
#include "optim/sharded_adamw.hpp"

// What the Checkpointer saves and restores (checkpoint/checkpointer.hpp:
// TrainingState), built from the flat units and the optimizer: the bridge
// that keeps the checkpoint component free of FSDP and AdamW.
namespace wireup::train {

// The flat units' shards and the optimizer's moments (training).
TrainingState training_state(const std::vector<FlatUnit*>& units, ShardedAdamW& opt);
// The parameter shards alone, for loading weights from a checkpoint (eval,
// generate): its AdamW moments are left unread (UnitShard's exp_avg
// undefined), and loading sets nothing else. Not for saving.
TrainingState weights_state(const std::vector<FlatUnit*>& units);

}  // namespace wireup::train
