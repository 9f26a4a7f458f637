#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

// Slurm host list syntax: "n[1-3,7],gpu-[01-02]", several bracket groups per
// name ("r[1-2]n[1-2]"), zero padding taken from the lower bound's width.
// Throws InputError naming the list on bad syntax or more than max_hosts.
std::vector<std::string> expand_nodelist(std::string_view list,
                                         std::size_t max_hosts = 65536);

// The first host of a list, without expanding the rest.
std::string first_node(std::string_view list);

}  // namespace wireup

namespace wireup {

// SLURM_STEP_TASKS_PER_NODE / SLURM_TASKS_PER_NODE: "2(x3),1" -> {2,2,2,1}.
std::vector<std::uint32_t> expand_tasks_per_node(std::string_view spec);

}  // namespace wireup
