#include "wireup/slurm_conf_nodes.hpp"

#include <cctype>
#include <vector>

#include "wireup/error.hpp"
#include "wireup/nodelist.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

constexpr int kMaxIncludeDepth = 8;
constexpr std::size_t kMaxHostsPerLine = 65536;
// Names expanded over the whole file and its includes: far above any real
// cluster, low enough that a hostile or broken file cannot stall slurmstepd.
constexpr std::size_t kMaxHostsTotal = 1u << 21;

struct Line {
  std::string text;
  std::size_t number;  // of its first physical line
};

// Physical lines -> logical lines: comments removed (a `\#` stays a '#'),
// trailing backslashes joined with the next line.
std::vector<Line> logical_lines(std::string_view text) {
  std::vector<Line> out;
  std::string cur;
  std::size_t start = 0, number = 0;
  bool continuing = false;
  for (const auto& raw : split(text, '\n')) {
    ++number;
    if (!continuing) start = number;
    std::string line;
    for (std::size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] == '\\' && i + 1 < raw.size() && raw[i + 1] == '#') {
        line += '#';
        ++i;
      } else if (raw[i] == '#') {
        break;
      } else {
        line += raw[i];
      }
    }
    std::string_view body = trim(line);
    continuing = !body.empty() && body.back() == '\\';
    if (continuing) body.remove_suffix(1);
    cur += std::string(body);
    if (continuing) {
      cur += ' ';
      continue;
    }
    out.push_back({cur, start});
    cur.clear();
  }
  if (!cur.empty()) out.push_back({cur, start});
  return out;
}

// "KEY=VALUE" words; a value may be double-quoted and hold spaces.
std::vector<std::pair<std::string, std::string>> words(const std::string& line,
                                                       const std::string& where) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    std::string key, value;
    while (i < line.size() && line[i] != '=' && !std::isspace(static_cast<unsigned char>(line[i])))
      key += line[i++];
    if (i >= line.size() || line[i] != '=')
      throw InputError(where + ": expected KEY=VALUE, got " + quoted(key));
    ++i;
    if (i < line.size() && line[i] == '"') {
      const auto close = line.find('"', i + 1);
      if (close == std::string::npos) throw InputError(where + ": unclosed '\"' after " + key);
      value = line.substr(i + 1, close - i - 1);
      i = close + 1;
    } else {
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i])))
        value += line[i++];
    }
    out.emplace_back(to_lower(key), value);
  }
  return out;
}

// The entry for position `index` of a NodeName list of `names` entries:
// pairwise, or the single entry shared by all.
std::string pick(const std::vector<std::string>& list, std::size_t index, std::size_t names,
                 const std::string& key, const std::string& where) {
  if (list.empty()) return "";
  if (list.size() == 1) return list.front();
  if (list.size() < names)
    throw InputError(where + ": " + key + " lists " + std::to_string(list.size()) +
                     " entries for " + std::to_string(names) +
                     " NodeName entries (expected one, or at least one per name)");
  return list[index];
}

std::string dir_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::optional<ConfNode> find_in(std::string_view text, const std::string& path,
                                const std::string& node, const ConfReader& read, int depth,
                                std::size_t& budget) {
  for (const Line& line : logical_lines(text)) {
    if (line.text.empty()) continue;
    const std::string where = path + ":" + std::to_string(line.number);
    const std::string lower = to_lower(line.text);
    if (lower.rfind("include", 0) == 0 && lower.size() > 7 &&
        std::isspace(static_cast<unsigned char>(lower[7]))) {
      const std::string file(trim(std::string_view(line.text).substr(7)));
      if (file.empty()) throw InputError(where + ": include without a file name");
      if (depth >= kMaxIncludeDepth)
        throw InputError(where + ": include " + quoted(file) + " nested more than " +
                         std::to_string(kMaxIncludeDepth) + " deep");
      const std::string target = file.front() == '/' ? file : dir_of(path) + "/" + file;
      const auto inc = read(target);
      if (!inc) throw InputError(where + ": cannot read included file " + quoted(target));
      if (auto found = find_in(*inc, target, node, read, depth + 1, budget)) return found;
      continue;
    }
    if (lower.rfind("nodename=", 0) != 0) continue;
    std::string names, addrs, hosts;
    for (const auto& [k, v] : words(line.text, where)) {
      if (k == "nodename") names = v;
      if (k == "nodeaddr") addrs = v;
      if (k == "nodehostname") hosts = v;
    }
    if (names.empty()) throw InputError(where + ": NodeName= is empty (expected a host list)");
    if (to_lower(names) == "default") continue;
    std::vector<std::string> name_list, addr_list, host_list;
    try {
      name_list = expand_nodelist(names, kMaxHostsPerLine);
      if (!addrs.empty()) addr_list = expand_nodelist(addrs, kMaxHostsPerLine);
      if (!hosts.empty()) host_list = expand_nodelist(hosts, kMaxHostsPerLine);
    } catch (const InputError& e) {
      throw InputError(where + ": " + e.what());
    }
    const std::size_t used = name_list.size() + addr_list.size() + host_list.size();
    if (used > budget)
      throw InputError(where + ": more than " + std::to_string(kMaxHostsTotal) +
                       " host names in NodeName/NodeAddr/NodeHostname lists in all");
    budget -= used;
    // Checked on every line, as Slurm does: a short list is the file's error.
    const std::size_t n = name_list.size();
    pick(addr_list, n - 1, n, "NodeAddr", where);
    pick(host_list, n - 1, n, "NodeHostname", where);
    for (std::size_t i = 0; i < n; ++i) {
      if (name_list[i] != node) continue;
      return ConfNode{pick(addr_list, i, name_list.size(), "NodeAddr", where),
                      pick(host_list, i, name_list.size(), "NodeHostname", where), where};
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<ConfNode> find_conf_node(std::string_view text, const std::string& path,
                                       const std::string& node, const ConfReader& read) {
  std::size_t budget = kMaxHostsTotal;
  return find_in(text, path, node, read, 0, budget);
}

}  // namespace wireup
