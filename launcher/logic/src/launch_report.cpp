#include "wireup/launch_report.hpp"

#include <sys/wait.h>

#include <csignal>
#include <nlohmann/json.hpp>

#include "wireup/text.hpp"

namespace wireup {

namespace {

struct SigName {
  int num;
  const char* name;
};

// The signals a launcher meets; the rest print as numbers.
const SigName kSignals[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},       {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
    {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"},     {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
    {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"},     {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
    {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"},     {SIGTERM, "SIGTERM"}, {SIGCHLD, "SIGCHLD"},
    {SIGCONT, "SIGCONT"}, {SIGSTOP, "SIGSTOP"},     {SIGTSTP, "SIGTSTP"}, {SIGXCPU, "SIGXCPU"},
    {SIGXFSZ, "SIGXFSZ"}, {SIGVTALRM, "SIGVTALRM"}, {SIGPROF, "SIGPROF"}, {SIGSYS, "SIGSYS"},
};

}  // namespace

std::optional<int> signal_number(std::string_view name) {
  const auto up = to_upper(trim(name));
  if (auto n = parse_uint(up, 64); n && *n > 0) return static_cast<int>(*n);
  const std::string full = up.rfind("SIG", 0) == 0 ? up : "SIG" + up;
  for (const auto& s : kSignals)
    if (full == s.name) return s.num;
  return std::nullopt;
}

std::string signal_name(int sig) {
  for (const auto& s : kSignals)
    if (s.num == sig) return s.name;
  return "signal " + std::to_string(sig);
}

WorkerExit decode_wait_status(int status) {
  if (WIFSIGNALED(status)) return {true, WTERMSIG(status)};
  if (WIFEXITED(status)) return {false, WEXITSTATUS(status)};
  return {false, 1};  // stopped/continued are never passed here
}

int launcher_exit_code(const WorkerExit& e) { return e.signaled ? 128 + e.code : e.code; }

std::string describe_exit(const WorkerExit& e) {
  return e.signaled ? signal_name(e.code) : "exit code " + std::to_string(e.code);
}

std::optional<ErrorFileReport> parse_error_file(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("message")) return std::nullopt;
  ErrorFileReport r;
  const auto& m = j["message"];
  if (m.is_string()) {
    r.message = m.get<std::string>();
  } else if (m.is_object()) {
    if (m.contains("message") && m["message"].is_string()) r.message = m["message"];
    if (m.contains("extraInfo") && m["extraInfo"].is_object()) {
      const auto& x = m["extraInfo"];
      if (x.contains("py_callstack") && x["py_callstack"].is_string())
        r.traceback = x["py_callstack"];
      if (x.contains("timestamp") && x["timestamp"].is_string()) r.timestamp = x["timestamp"];
    }
  } else {
    return std::nullopt;
  }
  return r;
}

namespace {
// "  stalled:    ..." from the first stall line in `tail`, or nothing.
std::string stall_line(const std::vector<std::string>& tail) {
  constexpr std::string_view kPrefix = "wireup-train: ";
  for (const auto& l : tail) {
    const auto at = l.find(kPrefix);
    if (at == std::string::npos) continue;
    const std::string rest = l.substr(at + kPrefix.size());
    for (const std::string_view kind : {"peer", "data", "checkpoint"}) {
      const std::string lead = std::string(kind) + " stalled: ";
      if (rest.compare(0, lead.size(), lead) != 0) continue;
      // A peer's line keeps its old form; data and checkpoint say which.
      return "  stalled:    " + (kind == "peer" ? rest.substr(lead.size()) : rest) + "\n";
    }
  }
  return "";
}
}  // namespace

std::string format_failure_summary(const FailureFacts& f) {
  std::string s = "wireup-launch: worker failed (root cause)\n";
  s += "  rank:       " + std::to_string(f.rank) + " (local rank " + std::to_string(f.local_rank) +
       ", node rank " + std::to_string(f.node_rank) + ")\n";
  s += "  host:       " + (f.host.empty() ? std::string("unknown") : f.host) + "\n";
  if (f.exit.signaled)
    s += "  signal:     " + std::to_string(f.exit.code) + " (" + signal_name(f.exit.code) +
         "), exit code " + std::to_string(launcher_exit_code(f.exit)) + "\n";
  else
    s += "  exit code:  " + std::to_string(f.exit.code) + "\n";
  // wireup-train's line for a stall (exit 3): a peer (which collective, which
  // ranks never arrived; the failed rank is the one that waited), or this
  // rank's data or checkpoint file (which file).
  s += stall_line(f.log_tail);
  s += "  attempt:    " + std::to_string(f.attempt) + "\n";
  if (f.error_file) {
    s += "  error:      " + f.error_file->message + "\n";
    if (!f.error_file->traceback.empty()) {
      s += "  traceback:\n";
      for (const auto& l : split(f.error_file->traceback, '\n'))
        if (!l.empty()) s += "    " + l + "\n";
    }
  }
  if (!f.log_tail.empty()) {
    s += "  last output of rank " + std::to_string(f.rank) + ":\n";
    for (const auto& l : f.log_tail) s += "    " + l + "\n";
  }
  if (!f.log_path.empty()) s += "  full log:   " + f.log_path + "\n";
  return s;
}

void LineTail::feed(std::string_view bytes) {
  if (capacity_ == 0) return;
  for (char c : bytes) {
    if (c != '\n') {
      if (partial_.size() < 4096) partial_ += c;  // a runaway line is cut, not kept whole
      continue;
    }
    if (ring_.size() < capacity_) {
      ring_.push_back(std::move(partial_));
    } else {
      ring_[next_] = std::move(partial_);
    }
    next_ = (next_ + 1) % capacity_;
    partial_.clear();
  }
}

std::vector<std::string> LineTail::lines() const {
  std::vector<std::string> out;
  if (ring_.size() < capacity_) {
    out = ring_;
  } else {
    for (std::size_t i = 0; i < capacity_; ++i) out.push_back(ring_[(next_ + i) % capacity_]);
  }
  if (!partial_.empty()) out.push_back(partial_);
  return out;
}

}  // namespace wireup
