#include "wireup/master_addr.hpp"

#include <algorithm>

#include "wireup/error.hpp"
#include "wireup/rendezvous.hpp"
#include "wireup/text.hpp"

namespace wireup {
namespace {

// A name or literal from slurm.conf -> IPv4, by the same rules as a node name.
std::optional<std::string> address_of(const std::string& value, const AddressSources& s) {
  if (auto ip = ipv4_from_host_name(value)) return ip;
  if (s.resolve)
    if (auto ip = s.resolve(value); ip && is_ipv4_literal(*ip)) return ip;
  return std::nullopt;
}

}  // namespace

NodeAddress find_node_ipv4(const std::string& node, const AddressSources& s) {
  NodeAddress r;
  if (auto ip = ipv4_from_host_name(node)) {
    r.ipv4 = *ip;
    r.source = "node name";
    return r;
  }
  r.tried.push_back("node name: not ip-A-B-C-D or an IPv4 literal");
  if (s.resolve) {
    if (auto ip = s.resolve(node); ip && is_ipv4_literal(*ip)) {
      r.ipv4 = *ip;
      r.source = "resolver";
      return r;
    }
    r.tried.push_back("resolver (hosts file, DNS): no IPv4 address");
  }
  for (const auto& path : s.slurm_conf_paths) {
    const auto text = s.read_file ? s.read_file(path) : std::nullopt;
    if (!text) {
      r.tried.push_back(path + ": absent or unreadable");
      continue;
    }
    std::optional<ConfNode> found;
    try {
      found = find_conf_node(*text, path, node, s.read_file);
    } catch (const InputError& e) {
      r.tried.push_back(e.what());
      continue;
    }
    if (!found) {
      r.tried.push_back(path + ": no NodeName line names it");
      continue;
    }
    const bool by_addr = !found->addr.empty();
    const std::string value = by_addr ? found->addr : found->hostname;
    const std::string key = by_addr ? "NodeAddr" : "NodeHostname";
    if (value.empty()) {
      r.tried.push_back(found->origin + ": names it without NodeAddr or NodeHostname");
      continue;
    }
    if (auto ip = address_of(value, s)) {
      r.ipv4 = *ip;
      r.source =
          "slurm.conf " + key + (value == *ip ? "" : " " + value) + " (" + found->origin + ")";
      return r;
    }
    r.tried.push_back(found->origin + ": " + key + "=" + value + " has no IPv4 address");
  }
  if (s.slurm_conf_paths.empty()) r.tried.push_back("slurm.conf: no candidate file");
  return r;
}

std::string no_address_message(const std::string& node, const std::string& context,
                               const NodeAddress& result, const std::string& remedy) {
  std::string tried;
  for (const auto& t : result.tried) tried += (tried.empty() ? "" : "; ") + t;
  return "MASTER_ADDR: cannot find an IPv4 address for node " + quoted(node) + " (" + context +
         "). Tried: " + tried + ". Make the name resolvable, declare NodeAddr in slurm.conf, or " +
         remedy;
}

MasterAddr resolve_master_addr(const std::string& first_node, const NodeAddress& found,
                               const std::optional<std::string>& own, const std::string& remedy) {
  if (!found.ipv4.empty()) return {found.ipv4, found.source};
  if (own && is_ipv4_literal(*own)) return {*own, "the task's own MASTER_ADDR"};
  throw InputError(
      no_address_message(first_node, "first node of SLURM_STEP_NODELIST", found, remedy));
}

std::vector<std::string> slurm_conf_candidates(const std::optional<std::string>& task_slurm_conf,
                                               const std::optional<std::string>& own_slurm_conf) {
  std::vector<std::string> out;
  auto add = [&](const std::optional<std::string>& p) {
    if (p && !p->empty() && std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
  };
  add(task_slurm_conf);
  add(own_slurm_conf);
  // Configless: slurmd keeps what slurmctld sent in SlurmdSpoolDir/conf-cache
  // and links /run/slurm/conf to it (Slurm's "configless" documentation).
  add("/run/slurm/conf/slurm.conf");
  add("/var/spool/slurmd/conf-cache/slurm.conf");
  add("/etc/slurm/slurm.conf");
  add("/opt/slurm/etc/slurm.conf");
  return out;
}

}  // namespace wireup
