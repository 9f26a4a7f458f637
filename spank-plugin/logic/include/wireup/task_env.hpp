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

// Where the task stands with respect to a container plugin (docs/containers.md).
struct TaskContext {
  // The job's environment as the user submitted it, before any container
  // plugin acted; null when unknown (every current value is then the user's).
  EnvLookup submitted;
  // Which root the install trees (aws-ofi-nccl, /opt/amazon/efa) were read
  // from, for the notes: "the node's root" or the container's.
  std::string root_read;
  // Set when plugstack.conf loads a container plugin after wireup: the
  // warning, printed first.
  std::string order_warning;
};

// The whole environment wireup gives one task, and why. Throws InputError
// when the task cannot be wired (bad layout, no address, EFA required).
TaskPlan plan_task(const TaskFacts& task, const AdminConfig& admin, const UserOptions& user,
                   const HostFacts& host, const EnvLookup& current, const TaskContext& ctx = {});

// "NAME=VALUE  (action: reason) [source]" lines, then "# note" lines, for
// --wireup-verbose and wireup-env.
std::string describe(const TaskPlan& plan);

}  // namespace wireup
