#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

// "SIGTERM", "TERM", "15" -> 15. nullopt for anything else.
std::optional<int> signal_number(std::string_view name);
std::string signal_name(int sig);  // 15 -> "SIGTERM"; unknown -> "signal 77"

// How a worker ended, from waitpid's status.
struct WorkerExit {
  bool signaled = false;
  int code = 0;  // exit code, or the signal number when signaled
};
WorkerExit decode_wait_status(int status);

// The launcher's own exit code for a worker's end: its code, 128+signal.
int launcher_exit_code(const WorkerExit& e);
// How it ended, for a line: "exit code 3" or "SIGKILL".
std::string describe_exit(const WorkerExit& e);

// What torch's @record wrote to TORCHELASTIC_ERROR_FILE.
struct ErrorFileReport {
  std::string message;    // "ValueError: ..."
  std::string traceback;  // extraInfo.py_callstack, when present
  std::string timestamp;
};
// nullopt when the text is not a torchelastic error file.
std::optional<ErrorFileReport> parse_error_file(std::string_view json_text);

// Everything the root-cause summary names.
struct FailureFacts {
  std::uint32_t rank = 0;
  std::uint32_t local_rank = 0;
  std::uint32_t node_rank = 0;
  std::string host;
  std::uint32_t attempt = 0;
  WorkerExit exit;
  std::optional<ErrorFileReport> error_file;
  std::vector<std::string> log_tail;  // last lines of the worker's stderr (then stdout)
  std::string log_path;               // where the whole log is, if kept
};
// The summary; a "stalled:" line repeats wireup-train's "peer stalled",
// "data stalled" or "checkpoint stalled" line when the log tail has one
// (docs/reliability.md, "A stalled rank").
std::string format_failure_summary(const FailureFacts& f);

// Keeps the last `capacity` complete lines fed to it, and the pending partial one.
class LineTail {
 public:
  explicit LineTail(std::size_t capacity = 20) : capacity_(capacity) {}
  void feed(std::string_view bytes);
  std::vector<std::string> lines() const;  // oldest first, partial line last

 private:
  std::size_t capacity_;
  std::vector<std::string> ring_;
  std::size_t next_ = 0;
  std::string partial_;
};

}  // namespace wireup
