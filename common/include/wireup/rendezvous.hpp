#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wireup {

// MASTER_PORT comes from [base, base + range). The default sits above Linux's
// ephemeral range (32768-60999), where the kernel never hands out ports.
struct PortPolicy {
  std::uint32_t base = 61000;
  std::uint32_t range = 4535;
};

// Steps of one job take consecutive slots; jobs are spaced at least this
// many slots apart (the smallest stride coprime to the range), so jobs whose
// ids are close never share a port for their first kStepsPerJob steps.
inline constexpr std::uint64_t kStepsPerJob = 64;

// Same inputs, same port: every task of a step computes it independently.
std::uint32_t derive_port(const PortPolicy& policy, std::uint64_t job_id,
                          std::uint64_t step_id);

// nullopt when usable; otherwise why not.
std::optional<std::string> check_port_policy(const PortPolicy& policy,
                                             std::uint32_t ephemeral_lo,
                                             std::uint32_t ephemeral_hi);

bool is_ipv4_literal(std::string_view s);

// "ip-10-1-2-3" (EC2 and HyperPod host names) or a literal -> "10.1.2.3".
std::optional<std::string> ipv4_from_host_name(std::string_view host);

// Who a task is, torchrun's vocabulary.
struct TaskLayout {
  std::uint32_t rank = 0;              // RANK
  std::uint32_t local_rank = 0;        // LOCAL_RANK
  std::uint32_t world_size = 1;        // WORLD_SIZE
  std::uint32_t local_world_size = 1;  // LOCAL_WORLD_SIZE
  std::uint32_t node_rank = 0;         // GROUP_RANK, NODE_RANK
  std::uint32_t num_nodes = 1;         // GROUP_WORLD_SIZE
};

// Throws InputError if the numbers cannot describe a real task.
void check_layout(const TaskLayout& t);

}  // namespace wireup
