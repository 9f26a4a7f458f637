#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wireup/control_message.hpp"

namespace wireup {

// One TCP connection between two launchers carrying ControlMessage lines
// (wireup/control_message.hpp); partial reads are buffered.
class ControlLink {
 public:
  explicit ControlLink(int fd) : fd_(fd) {}
  ~ControlLink();
  ControlLink(const ControlLink&) = delete;
  ControlLink& operator=(const ControlLink&) = delete;

  int fd() const { return fd_; }
  bool send(ControlVerb verb, const std::vector<std::uint32_t>& args = {});
  // Reads what is available; false on EOF, error or an overlong line.
  // Complete messages in out.
  bool receive(std::vector<ControlMessage>& out);

  std::optional<std::uint32_t> peer_rank;  // from HELLO
  bool done = false;                       // exec mode: its rank is done (or failed and left)
  bool refused = false;                    // agent 0 closes it: another step's launcher

 private:
  int fd_;
  ControlLineReader reader_;
};

}  // namespace wireup
