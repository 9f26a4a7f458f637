#include "wireup/process_tree.hpp"

#include <map>

#include "wireup/text.hpp"

namespace wireup {

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
  const auto open = line.find(" (");
  const auto close = line.rfind(") ");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open)
    return std::nullopt;
  const auto pid = parse_uint(line.substr(0, open), 1u << 30);
  const std::string_view rest = line.substr(close + 2);  // "S PPID ..."
  if (!pid || rest.size() < 3 || rest[1] != ' ') return std::nullopt;
  const auto sp = rest.find(' ', 2);
  const auto ppid =
      parse_uint(rest.substr(2, sp == std::string_view::npos ? rest.npos : sp - 2), 1u << 30);
  if (!ppid) return std::nullopt;
  return ProcStat{static_cast<pid_t>(*pid), static_cast<pid_t>(*ppid), rest[0]};
}

std::vector<pid_t> live_descendants(pid_t root, const std::vector<ProcStat>& procs) {
  std::multimap<pid_t, const ProcStat*> children;
  for (const auto& p : procs) children.emplace(p.ppid, &p);
  std::vector<pid_t> out;
  std::vector<pid_t> todo{root};
  for (std::size_t i = 0; i < todo.size() && todo.size() <= procs.size() + 1; ++i) {
    const auto [b, e] = children.equal_range(todo[i]);
    for (auto it = b; it != e; ++it) {
      todo.push_back(it->second->pid);
      if (it->second->state != 'Z') out.push_back(it->second->pid);
    }
  }
  return out;
}

}  // namespace wireup
