#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

// One line between two launchers: a verb and unsigned numbers, e.g. "FAIL 3 137\n".
// Agent mode (restarts, agent 0 coordinates):
//   agent -> 0:  HELLO <rank> | FAIL <attempt> | DONE <attempt> | STOPPED <attempt>
//   0 -> agent:  STOP <attempt> | START <attempt> <master-port> | EXIT <code>
// Exec mode (fail fast, rank 0's launcher is the hub):
//   rank -> 0:   HELLO <rank> | DONE <rank> | FAIL <rank> <code>
//   0 -> rank:   STOP <failed rank> <code>
struct ControlMessage {
  std::string verb;
  std::vector<std::uint32_t> args;
};

std::string format_message(const std::string& verb, std::vector<std::uint32_t> args);

// Splits a byte stream into messages; a partial last line waits for more bytes.
// A number that does not parse reads as 0; a line longer than 4 KiB is refused
// (false), so a stray peer cannot grow the buffer without bound.
class ControlLineReader {
 public:
  bool feed(std::string_view bytes, std::vector<ControlMessage>& out);

 private:
  std::string buf_;
};

}  // namespace wireup
