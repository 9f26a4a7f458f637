#pragma once
// Where agent 0 listens for the other agents' control links when no PMIx
// exchange can publish it (SLURM_* and torchrun's static mode), and what an
// agent says when it links. Every agent derives the same endpoint from facts
// they all share: MASTER_ADDR's node and MASTER_PORT.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wireup/control_message.hpp"

namespace wireup {

// The control port sits this many ports above MASTER_PORT (below it when that
// passes 65535). Steps of one job take consecutive MASTER_PORT slots and jobs
// are spaced at least kStepsPerJob (64) slots apart (wireup/rendezvous.hpp), so
// the port is this job's slot for step + 32: only a job running steps s and
// s + 32 at once could meet it, and never a restart's MASTER_PORT (probed
// upwards from MASTER_PORT + 1 by bind, which agent 0's listener fails).
inline constexpr std::uint32_t kControlPortOffset = 32;

// MASTER_PORT -> the control port (--control-port overrides it).
std::uint32_t control_port_for(std::uint32_t master_port);

// An agent's HELLO: its rank, how many workers it runs and which step it
// belongs to (agent mode only; exec mode's HELLO carries the rank alone):
// HELLO <rank> <nproc> <job> <step>.
struct AgentHello {
  std::uint32_t rank = 0;
  std::optional<std::uint32_t> nproc = std::nullopt;  // absent from an exec-mode HELLO
  std::optional<std::uint32_t> job = std::nullopt, step = std::nullopt;
};
std::vector<std::uint32_t> hello_args(const AgentHello& h);
std::optional<AgentHello> parse_hello(const ControlMessage& m);  // nullopt: not a HELLO

// A derived port can be another step's: agent 0 closes a link whose HELLO
// names another job or step (nullopt: ours, or not said), so a stranger never
// counts among its agents. The text says why.
std::optional<std::string> foreign_hello(const AgentHello& h, std::uint32_t job,
                                         std::uint32_t step);

// Without PMIx every agent must run as many workers as agent 0 (ranks are
// agent * nproc + local rank): nullopt when `theirs` matches, else the error
// agent 0 prints before it stops the job.
std::optional<std::string> nproc_mismatch(const AgentHello& theirs, std::uint32_t ours);

// The error an agent gives when agent 0 never accepted its link.
std::string control_unreachable(const std::string& addr, std::uint32_t port, int waited_s,
                                const std::string& why);

}  // namespace wireup
