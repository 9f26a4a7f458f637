#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wireup {

// Line messages between agents for restarts. Agent 0 coordinates:
//   agent -> 0:  HELLO <rank> | FAIL <attempt> | DONE <attempt> | STOPPED <attempt>
//   0 -> agent:  STOP <attempt> | START <attempt> <master-port> | EXIT <code>
// Every agent stops its workers on STOP, reports STOPPED, and restarts them
// together on START, so all nodes move to the next attempt in step.
struct ControlMessage {
  std::string verb;
  std::vector<std::uint32_t> args;
};
std::string format_message(const std::string& verb, std::vector<std::uint32_t> args);

// One TCP connection carrying those lines; partial reads are buffered.
class ControlLink {
 public:
  explicit ControlLink(int fd) : fd_(fd) {}
  ~ControlLink();
  ControlLink(const ControlLink&) = delete;
  ControlLink& operator=(const ControlLink&) = delete;

  int fd() const { return fd_; }
  bool send(const std::string& verb, std::vector<std::uint32_t> args = {});
  // Reads what is available; false on EOF or error. Complete messages in out.
  bool receive(std::vector<ControlMessage>& out);

  std::optional<std::uint32_t> peer_rank;  // from HELLO
  bool done = false, stopped = false;

 private:
  int fd_;
  std::string buf_;
};

}  // namespace wireup
