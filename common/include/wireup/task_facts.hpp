#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "wireup/rendezvous.hpp"

namespace wireup {

// What Slurm tells us about one task of a step.
struct TaskFacts {
  std::uint64_t job_id = 0;
  std::uint64_t step_id = 0;
  TaskLayout layout;
  std::string master_addr;                     // IPv4 literal of the step's first node
  std::string master_addr_source;              // where it came from (wireup/master_addr.hpp)
  std::optional<std::uint32_t> cpus_per_task;  // SLURM_CPUS_PER_TASK
};

}  // namespace wireup
