#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wireup/env_plan.hpp"
#include "wireup/host_facts.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/settings.hpp"

namespace wireup {

// What Slurm tells us about one task of a step.
struct TaskFacts {
  std::uint64_t job_id = 0;
  std::uint64_t step_id = 0;
  TaskLayout layout;
  std::string master_addr;                   // IPv4 literal of the step's first node
  std::string master_addr_source;            // where it came from (wireup/master_addr.hpp)
  std::optional<std::uint32_t> cpus_per_task;  // SLURM_CPUS_PER_TASK
};

struct TaskPlan {
  std::vector<Decision> decisions;
  std::vector<std::string> notes;
};

// The whole environment wireup gives one task, and why. Throws InputError
// when the task cannot be wired (bad layout, no address, EFA required).
TaskPlan plan_task(const TaskFacts& task, const AdminConfig& admin, const UserOptions& user,
                   const HostFacts& host, const EnvLookup& current);

// "NAME=VALUE  (action: reason)" lines, for --wireup-verbose and wireup-env.
std::string describe(const TaskPlan& plan);

}  // namespace wireup
