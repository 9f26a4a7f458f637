#pragma once
#include <string>

#include "wireup/env_plan.hpp"
#include "wireup/task_facts.hpp"

namespace wireup {

// A task's facts read back from the SLURM_* variables srun gives every task
// (SLURM_PROCID, SLURM_LOCALID, SLURM_NODEID, SLURM_STEP_TASKS_PER_NODE, ...),
// for tools that run inside a task rather than inside slurmstepd.
struct SlurmTask {
  TaskFacts facts;         // master_addr left empty: resolving is I/O
  std::string first_node;  // of SLURM_STEP_NODELIST
};

// Throws InputError naming the first missing or malformed variable.
SlurmTask task_from_slurm_env(const EnvLookup& env);

}  // namespace wireup
