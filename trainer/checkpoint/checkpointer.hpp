#pragma once
#include <ATen/core/Tensor.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "comm/comm.hpp"
#include "fsdp/flat_unit.hpp"
#include "optim/sharded_adamw.hpp"
#include "checkpoint/checkpoint_format.hpp"

namespace wireup::train {

// What a checkpoint records besides the tensors.
struct CheckpointInfo {
  std::int64_t step = 0;
  std::uint64_t seed = 0;
  ModelConfig model;
  std::string preset;
  std::string sharding;
  std::string data_position;
};

// Writes and reads sharded checkpoints in DIR/step-NNNNNNNN/:
//   rank-SSSSS.bin   one per shard rank (replicas do not write): per unit, the
//                    fp32 slices of parameters, exp_avg and exp_avg_sq
//   rank-SSSSS.json  that file's chunks and their SHA-256, renamed in when durable
//   metadata.json    written last by world rank 0, after every rank file is
//                    durable: the commit. A directory without it is ignored.
class Checkpointer {
 public:
  Checkpointer(std::filesystem::path dir, int keep, bool async, CommGroups groups,
               std::vector<FlatUnit*> units, ShardedAdamW* opt);
  ~Checkpointer();  // waits for a save in flight

  // Saves the current state. Async: writes in the background, straight from
  // the live CPU shards (GPU shards: from host copies); training goes on, and
  // only the next optimizer update must wait for the writer: call
  // before_update() first. At most one save is in flight.
  void save(const CheckpointInfo& info);
  void before_update();
  void wait();

  int saves() const { return saves_; }
  double stall_seconds() const { return stall_s_; }  // training time lost to saves

  // `spec`: "auto"/"latest" (newest complete checkpoint under DIR, falling
  // back past broken ones with a warning; none: nullopt) or a step directory
  // (must load, or InputError). Every rank loads only the ranges its shards
  // need, whatever the world size that wrote it.
  std::optional<CheckpointMeta> load(const std::string& spec, const ModelConfig& expect);

 private:
  struct Snapshot;
  void write(const std::shared_ptr<Snapshot>& snap);
  void load_from(const std::filesystem::path& step_dir, const CheckpointMeta& meta);

  std::filesystem::path dir_;
  int keep_;
  bool async_;
  CommGroups groups_;
  std::vector<FlatUnit*> units_;
  ShardedAdamW* opt_;
  std::thread writer_;
  std::vector<at::Tensor> host_;  // snapshot buffers for GPU state, reused
  int saves_ = 0;
  double stall_s_ = 0;
};

// All complete checkpoints under dir, newest first.
std::vector<std::filesystem::path> complete_checkpoints(const std::filesystem::path& dir);

}  // namespace wireup::train
