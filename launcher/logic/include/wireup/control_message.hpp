#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

// What one launcher tells another. On the wire each is a word (HELLO, FAIL...).
// Agent mode (restarts, agent 0 coordinates):
//   agent -> 0:  HELLO <rank> <nproc> <job> <step> (wireup/control_endpoint.hpp)
//                | FAIL <attempt> | DONE <attempt> | STOPPED <attempt>
//   0 -> agent:  STOP <attempt> | START <attempt> <master-port> | EXIT <code>
//   both ways:   LOST <code>: a worker failed with no restart left; every agent
//                stops its workers and exits with that code
// Exec mode (fail fast, rank 0's launcher is the hub):
//   rank -> 0:   HELLO <rank> | DONE <rank> | FAIL <rank> <code>
//   0 -> rank:   STOP <failed rank> <code>
enum class ControlVerb { Hello, Fail, Done, Stopped, Stop, Start, Exit, Lost };

// The verb's word on the wire ("HELLO"), and the verb of a word (nullopt for
// any other word).
std::string_view verb_word(ControlVerb verb);
std::optional<ControlVerb> parse_verb(std::string_view word);

// One line between two launchers: a verb and unsigned numbers, e.g. "FAIL 3 137\n".
struct ControlMessage {
  ControlVerb verb = ControlVerb::Hello;
  std::vector<std::uint32_t> args;
};

std::string format_message(ControlVerb verb, const std::vector<std::uint32_t>& args = {});

// Splits a byte stream into messages; a partial last line waits for more bytes.
// A number that does not parse reads as 0; a line with an unknown verb is
// skipped; a line longer than 4 KiB is refused (false), so a stray peer cannot
// grow the buffer without bound.
class ControlLineReader {
 public:
  bool feed(std::string_view bytes, std::vector<ControlMessage>& out);

 private:
  std::string buf_;
};

}  // namespace wireup
