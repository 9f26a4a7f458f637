#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "batch/batch_tokens.hpp"
#include "checkpoint/checkpointer.hpp"
#include "checkpoint/memory_checkpointer.hpp"
#include "comm/comm.hpp"
#include "comm/world_layout.hpp"
#include "config/train_options.hpp"
#include "fsdp/flat_unit.hpp"
#include "models/sharded_model.hpp"
#include "optim/sharded_adamw.hpp"

// Where a training run starts (train_main.cpp): its durable checkpoints, its
// memory snapshots, and the state it resumes from (docs/checkpoints.md,
// docs/memory-snapshots.md).
namespace wireup::train {

// A Checkpointer when the flags save, resume or stop after a step; from then
// on a stop signal waits for the end of the step.
std::unique_ptr<Checkpointer> open_checkpointer(const TrainOptions& o, const WorldLayout& w,
                                                const CommGroups& groups, ShardedModel& model,
                                                const std::vector<FlatUnit*>& units,
                                                ShardedAdamW& opt);

// --memory_checkpoint_freq K > 0: the MemoryCheckpointer (collective: DIR
// claimed, the peer group made), and its [memory] line; else nullptr. Its
// snapshots record this run's identity (its model, LoRA and DPO).
std::unique_ptr<MemoryCheckpointer> open_memory_checkpointer(const TrainOptions& o,
                                                             const WorldLayout& w,
                                                             const std::vector<FlatUnit*>& units,
                                                             ShardedAdamW& opt,
                                                             const RunIdentity& identity);

// The chat data set's template, as its manifest records it ("" for text and
// synthetic data): checkpoints carry it to generate.
std::string chat_template_of(TokenBatches& batches);

// --resume_from_checkpoint: the shards, moments and data position; the first
// step to run. With memory snapshots, "auto" takes the newest state of
// memory, a peer's replica or disk ("[resume] step=S source=... load_s=T", and a
// "[resume] skipped: ..." line for each newer state passed over).
std::int64_t resume(const TrainOptions& o, const WorldLayout& w, Checkpointer* ckpt,
                    MemoryCheckpointer* mem, TokenBatches& train, const RunIdentity& identity);

}  // namespace wireup::train
