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

// A collective that ended because ranks of its group did not arrive in time.
// `missing`: their ranks in the group; `detail`: what the backend saw.
class PeerStalled : public std::runtime_error {
 public:
  PeerStalled(std::vector<int> missing, double waited_s, const std::string& detail)
      : std::runtime_error(detail), missing(std::move(missing)), waited_s(waited_s) {}
  std::vector<int> missing;
  double waited_s;
};

}  // namespace wireup::train
