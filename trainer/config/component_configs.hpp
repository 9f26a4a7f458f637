#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

// The settings of the trainer's components that wireup-train's flags bind to
// directly (train_options.cpp), each the type its component takes: the
// checkpointer's policy (checkpoint/checkpointer.hpp), the memory snapshots'
// (checkpoint/memory_checkpointer.hpp) and the optimizer's
// hyperparameters (optim/sharded_adamw.hpp). Plain data.
namespace wireup::train {

// When to save and when to stop (the flags of docs/checkpoints.md).
struct CheckpointPolicy {
  std::filesystem::path dir;               // --checkpoint_dir; empty: nothing is saved
  std::int64_t freq = 0;                   // --checkpoint_freq; 0: only the last step and stops
  std::int64_t max_steps = 0;              // --max_steps: the last step is always saved
  std::int64_t stop_after_step = 0;        // --stop_after_step; 0: none
  int keep = 0;                            // --keep_checkpoints: verified ones kept; 0: all
  bool async = false;                      // --async_checkpointing
  bool start_fresh_if_unloadable = false;  // --start_fresh_if_unloadable
  // --comm_init_timeout: a file of a save that takes longer to write (a
  // write stuck on the file system) ends the rank with exit 3, naming the
  // file (watchdog/stall_watch.hpp); the checkpoints before stay whole.
  double io_timeout_s = 600;
};

// Memory snapshots (docs/memory-snapshots.md): every `freq` steps each rank's
// full training state into its node's memory, and a replica on a rank of the
// next node; --resume_from_checkpoint auto prefers them to the durable
// checkpoints.
struct MemorySnapshotPolicy {
  std::int64_t freq = 0;      // --memory_checkpoint_freq; 0: off
  std::string dir;            // --memory_checkpoint_dir; "": /dev/shm/wireup-$SLURM_JOB_ID
  double io_timeout_s = 600;  // --comm_init_timeout: the replica transfers and the commit
};

// AdamW's hyperparameters (--beta1, --beta2, --weight_decay; eps 1e-8).
struct AdamWConfig {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.1;
};

}  // namespace wireup::train
