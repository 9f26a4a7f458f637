#pragma once
#include <string>
#include <vector>

#include "job_wiring.hpp"
#include "wireup/launch_options.hpp"

namespace wireup {

// Agent mode: spawns this node's workers, forwards signals, fails fast and
// restarts in step with the other agents. Returns the launcher's exit code.
int run_agent(const LaunchOptions& o, Wiring& w, const std::vector<std::string>& base_env);

}  // namespace wireup
