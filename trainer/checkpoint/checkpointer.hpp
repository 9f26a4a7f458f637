#pragma once
#include <ATen/core/Tensor.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpoint_format.hpp"
#include "comm/comm.hpp"
#include "config/component_configs.hpp"

namespace wireup::train {

// What a checkpoint records besides the tensors.
struct CheckpointInfo {
  std::int64_t step = 0;
  std::uint64_t seed = 0;
  ModelConfig model;
  std::string preset;
  std::string sharding;
  std::string data_position;
  std::string chat_template;        // the chat data set's template (its manifest); "" for text
  std::optional<AdapterMeta> lora;  // a LoRA run's adapters and base
  std::optional<DpoMeta> dpo;       // a DPO run's settings and reference
};

// One unit's part of the training state on this rank, as a checkpoint and a
// memory snapshot hold it: the unit's layout, and this rank's fp32 slices
// (live tensors, written in place on load) of each tensor of its state, in
// TrainingState::tensor_names order (the parameters first).
struct UnitShard {
  UnitMeta layout;          // name, real parameters, parameter names and shapes
  std::int64_t offset = 0;  // of this rank's slice in the unit's flat buffer
  std::int64_t numel = 0;   // of this rank's slice, padding included
  std::vector<at::Tensor> tensors;
};

// What the Checkpointer and the MemoryCheckpointer save and restore
// (trainer/main builds it from the sharded model's flat units and the
// optimizer). Both list a unit's state by `tensor_names`: a new tensor of
// state is a name here and its slice in each UnitShard, which both carry.
struct TrainingState {
  // The tensors of every unit's state, by name (checkpoint_format.hpp's
  // unit_tensors): training's are the parameters and AdamW's moments.
  std::vector<std::string> tensor_names;
  // The parameters alone (eval, generate): loads them, never saves.
  bool weights_only = false;
  std::vector<UnitShard> units;
  double beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0;  // the optimizer's settings
  std::function<std::int64_t()> optimizer_steps;
  // After a load: the optimizer's step count set, the gradients zeroed.
  std::function<void(std::int64_t optimizer_steps)> restored;
  // The state a run starts from without a checkpoint (parameters initialised
  // as at start, moments zero), put back when checkpoints were read into it
  // but none loaded and the run starts at step 1 (--start_fresh_if_unloadable).
  std::function<void()> start_over;
};

// Writes and reads sharded checkpoints in DIR/step-NNNNNNNN/:
//   rank-SSSSS.bin   one per shard rank (replicas do not write): per unit, the
//                    fp32 slices of parameters, exp_avg and exp_avg_sq
//   rank-SSSSS.json  that file's chunks and their SHA-256, renamed in when durable
//   metadata.json    written last by world rank 0, after every rank file is
//                    durable: the commit. A directory without it is ignored.
class Checkpointer {
 public:
  Checkpointer(CheckpointPolicy policy, CommGroups groups, TrainingState state);
  ~Checkpointer();  // waits for a save in flight

  // After optimizer step `step`: every rank agrees whether to stop (a stop
  // signal reached one of them, or --stop_after_step), then saves when the
  // policy says so: every `freq` steps, the last step, and before stopping.
  // Returns the line to print when the run must stop now (after the save is
  // durable), else nullopt. `info` is called only when saving.
  std::optional<std::string> end_of_step(std::int64_t step, bool stop_signal,
                                         const std::function<CheckpointInfo()>& info);

  // Saves the current state. Async: writes in the background, straight from
  // the live CPU shards (GPU shards: from host copies); training goes on, and
  // only the next optimizer update must wait for the writer: call
  // before_update() first. At most one save is in flight.
  void save(const CheckpointInfo& info);
  void before_update();
  void wait();

  int saves() const { return saves_; }
  double stall_seconds() const { return stall_s_; }  // training time lost to saves

  // `spec`: "auto"/"latest" or a step directory. A step directory must load
  // (else InputError). "auto": the newest checkpoint under DIR that loads,
  // skipping broken ones with a warning; nullopt when DIR holds none. When it
  // holds some but none loads: InputError (exit 2), unless
  // start_fresh_if_unloadable (then a warning and nullopt). Every rank loads
  // only the ranges its shards need, whatever the world size that wrote it.
  // `expect`: this run's family, shape, rope scaling and adapters, which the
  // checkpoint must match (identity_mismatch, run_identity.hpp).
  std::optional<CheckpointMeta> load(const std::string& spec, const RunIdentity& expect);

 private:
  struct Snapshot;
  void write(const std::shared_ptr<Snapshot>& snap);
  void fail_if_a_rank_exited(const std::filesystem::path& step_dir,
                             const std::filesystem::path& awaited) const;
  void write_files(const std::shared_ptr<Snapshot>& snap, const std::filesystem::path& step_dir);
  std::chrono::milliseconds io_timeout() const;
  void load_from(const std::filesystem::path& step_dir, const CheckpointMeta& meta);
  void prune();

  CheckpointPolicy policy_;
  CommGroups groups_;
  TrainingState state_;
  std::thread writer_;
  std::vector<at::Tensor> host_;    // snapshot buffers for GPU state, reused
  std::set<std::string> verified_;  // step directories known to load (world rank 0)
  int saves_ = 0;
  double stall_s_ = 0;
};

}  // namespace wireup::train
