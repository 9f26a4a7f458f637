#pragma once
#include <string>

namespace wireup::spank {

// IPv4 literal of a Slurm node: from its name when it encodes one
// (ip-10-1-2-3), else the resolver (AF_INET only). "" when neither works.
std::string node_ipv4(const std::string& node);

}  // namespace wireup::spank
