#pragma once
// The processes below one process, read from /proc/PID/stat lines.
#include <sys/types.h>

#include <optional>
#include <string_view>
#include <vector>

namespace wireup {

struct ProcStat {
  pid_t pid = 0;
  pid_t ppid = 0;
  char state = '?';  // 'Z' for a zombie
};

// "PID (COMM) STATE PPID ..." (COMM may hold spaces and parentheses); nullopt
// for anything else.
std::optional<ProcStat> parse_proc_stat(std::string_view line);

// Every live (not zombie) process whose chain of parents reaches root, root
// excluded, parents before their children.
std::vector<pid_t> live_descendants(pid_t root, const std::vector<ProcStat>& procs);

}  // namespace wireup
