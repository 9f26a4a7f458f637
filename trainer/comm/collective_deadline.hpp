#pragma once
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

// The deadline every collective waits under, and what a backend throws when it
// passes (plain C++, no Torch). The watchdog (watchdog/) records collectives and
// turns a PeerStalled into the stalled-rank line; the backends here only wait.
namespace wireup::train {

// How long one collective may wait for the other ranks: --comm_init_timeout
// during start-up, the first step and checkpoint loads and saves,
// --comm_timeout after. Process-wide; read by every backend at each wait.
void set_collective_timeout(std::chrono::milliseconds t);
std::chrono::milliseconds collective_timeout();

// `t` for the scope's lifetime, then the timeout before it (a checkpoint
// save's collectives wait on storage: --comm_init_timeout).
class CollectiveTimeoutScope {
 public:
  explicit CollectiveTimeoutScope(std::chrono::milliseconds t) : previous_(collective_timeout()) {
    set_collective_timeout(t);
  }
  ~CollectiveTimeoutScope() { set_collective_timeout(previous_); }
  CollectiveTimeoutScope(const CollectiveTimeoutScope&) = delete;
  CollectiveTimeoutScope& operator=(const CollectiveTimeoutScope&) = delete;

 private:
  std::chrono::milliseconds previous_;
};

// The exit status of a rank whose collective's peers did not arrive in time.
inline constexpr int kExitPeerStalled = 3;

// A collective that ended because ranks of its group did not arrive in time.
// `missing`: their ranks in the group; `detail`: what the backend saw.
class PeerStalled : public std::runtime_error {
 public:
  PeerStalled(std::vector<int> missing, double waited_s, const std::string& detail)
      : std::runtime_error(detail), missing(std::move(missing)), waited_s(waited_s) {}
  std::vector<int> missing;
  double waited_s;
};

// A backend whose own thread must end the process (NCCL's watch: the main
// thread may be stuck in a CUDA call) reports the stall through this first.
// The watchdog installs its stalled-rank line (watchdog/recorded_comm.hpp:
// install_stall_reporter); none installed, a plain line. `missing`: ranks of
// `group` that did not arrive.
using StallReporter = void (*)(int rank, const std::string& group, double waited_s,
                               const std::vector<int>& missing, const std::string& detail);
void set_stall_reporter(StallReporter r);
void report_stall(int rank, const std::string& group, double waited_s,
                  const std::vector<int>& missing, const std::string& detail);

}  // namespace wireup::train
