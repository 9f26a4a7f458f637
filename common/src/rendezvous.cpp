#include "wireup/rendezvous.hpp"

#include <numeric>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup {

namespace {

// A job stride coprime to the range, so step 0 of successive jobs walks
// every port of the range (an even range and a stride of 64 would use 1/64).
std::uint64_t job_stride(std::uint64_t range) {
  std::uint64_t m = kStepsPerJob;
  while (std::gcd(m, range) != 1) ++m;
  return m;
}

}  // namespace

std::uint32_t derive_port(const PortPolicy& policy, std::uint64_t job_id,
                          std::uint64_t step_id) {
  // Batch, extern and interactive steps carry ids near 2^32; fold them in.
  const std::uint64_t r = policy.range == 0 ? 1 : policy.range;
  const std::uint64_t slot = ((job_id % r) * (job_stride(r) % r) + step_id % r) % r;
  return static_cast<std::uint32_t>(policy.base + slot);
}

std::optional<std::string> check_port_policy(const PortPolicy& p, std::uint32_t eph_lo,
                                             std::uint32_t eph_hi) {
  if (p.range == 0) return "port_range must be at least 1";
  if (p.base < 1024) return "port_base must be at least 1024 (privileged ports below)";
  const std::uint64_t last = std::uint64_t{p.base} + p.range - 1;
  if (last > 65535) return "port_base + port_range - 1 = " + std::to_string(last) +
                           " is above 65535";
  if (p.base <= eph_hi && last >= eph_lo)
    return "ports " + std::to_string(p.base) + "-" + std::to_string(last) +
           " overlap the ephemeral range " + std::to_string(eph_lo) + "-" +
           std::to_string(eph_hi) + " (a kernel-chosen port could collide)";
  return std::nullopt;
}

bool is_ipv4_literal(std::string_view s) {
  const auto parts = split(s, '.');
  if (parts.size() != 4) return false;
  for (const auto& p : parts) {
    if (p.empty() || p.size() > 3 || (p.size() > 1 && p[0] == '0')) return false;
    if (!parse_uint(p, 255)) return false;
  }
  return true;
}

std::optional<std::string> ipv4_from_host_name(std::string_view host) {
  if (is_ipv4_literal(host)) return std::string(host);
  // Short names and FQDNs alike: ip-10-1-2-3.ec2.internal
  const auto dot = host.find('.');
  const std::string_view label = host.substr(0, dot);
  if (label.size() < 10 || label.substr(0, 3) != "ip-") return std::nullopt;
  std::string candidate(label.substr(3));
  for (char& c : candidate)
    if (c == '-') c = '.';
  if (!is_ipv4_literal(candidate)) return std::nullopt;
  return candidate;
}

void check_layout(const TaskLayout& t) {
  auto bad = [](const std::string& why) { throw InputError("task layout: " + why); };
  if (t.world_size == 0) bad("world size is 0");
  if (t.rank >= t.world_size)
    bad("rank " + std::to_string(t.rank) + " is not below world size " +
        std::to_string(t.world_size));
  if (t.local_world_size == 0 || t.local_world_size > t.world_size)
    bad("local world size " + std::to_string(t.local_world_size) + " is not in 1.." +
        std::to_string(t.world_size));
  if (t.local_rank >= t.local_world_size)
    bad("local rank " + std::to_string(t.local_rank) + " is not below local world size " +
        std::to_string(t.local_world_size));
  if (t.num_nodes == 0 || t.node_rank >= t.num_nodes)
    bad("node rank " + std::to_string(t.node_rank) + " is not below node count " +
        std::to_string(t.num_nodes));
}

}  // namespace wireup
