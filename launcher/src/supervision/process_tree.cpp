#include "supervision/process_tree.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "wireup/process_tree.hpp"

namespace wireup {

namespace {

std::vector<ProcStat> read_proc() {
  std::vector<ProcStat> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;  // gone meanwhile
    if (auto p = parse_proc_stat(line)) out.push_back(*p);
  }
  return out;
}

void reap_children() {
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

}  // namespace

std::size_t kill_descendants() {
  std::size_t killed = 0;
  for (int round = 0; round < 50; ++round) {
    reap_children();
    const auto pids = live_descendants(getpid(), read_proc());
    if (pids.empty()) break;
    for (pid_t p : pids)
      if (kill(p, SIGKILL) == 0) ++killed;
    usleep(10000);
  }
  reap_children();
  return killed;
}

}  // namespace wireup
