#include "wireup/exec_supervision.hpp"

#include <cerrno>
#include <csignal>

namespace wireup {

ExecStepWatch::ExecStepWatch(std::uint32_t tasks) : done_(tasks, false) {}

void ExecStepWatch::done(std::uint32_t rank) {
  if (rank >= done_.size() || done_[rank]) return;
  done_[rank] = true;
  ++done_count_;
}

std::optional<RankFailure> ExecStepWatch::fail(std::uint32_t rank, int code) {
  if (root_) return std::nullopt;
  root_ = RankFailure{rank, code == 0 ? 1 : code};
  return root_;
}

bool forward_to_program(int si_code, pid_t sender, pid_t parent, pid_t program) {
  if (si_code != SI_USER && si_code != SI_QUEUE && si_code != SI_TKILL) return false;
  return sender > 0 && sender != parent && sender != program;
}

int exec_failure_exit_code(int err) { return err == ENOENT ? 127 : 126; }

}  // namespace wireup
