#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace wireup {

// What slurm.conf says about one node: `NodeName=gpu[01-32] NodeAddr=10.0.0.[1-32]`
// pairs the i-th name with the i-th address (one address or host name is shared
// by all names, as Slurm's multiple-slurmd builds allow).
struct ConfNode {
  std::string addr;      // NodeAddr, "" when the line gives none
  std::string hostname;  // NodeHostname, "" when the line gives none
  std::string origin;    // "FILE:LINE" of the NodeName line
};

// Reads a file's text; nullopt when it cannot be read.
using ConfReader = std::function<std::optional<std::string>(const std::string& path)>;

// Looks `node` up in the NodeName lines of slurm.conf `text` (read from
// `path`). Understands comments (#), line continuations (\), case-insensitive
// keys, NodeName=DEFAULT (skipped), host list ranges with zero padding, several
// NodeName lines, and `Include FILE` (relative to path's directory, read with
// `read`, at most 8 deep). nullopt: no NodeName line names the node.
// Throws InputError naming FILE:LINE for a malformed NodeName line, an address
// list shorter than its name list, or an unreadable include.
std::optional<ConfNode> find_conf_node(std::string_view text, const std::string& path,
                                       const std::string& node, const ConfReader& read);

}  // namespace wireup
