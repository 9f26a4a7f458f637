#pragma once
#include <string>
#include <vector>

#include "wireup/env_plan.hpp"
#include "wireup/host_facts.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/settings.hpp"
#include "wireup/task_facts.hpp"

namespace wireup {

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
