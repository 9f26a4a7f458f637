#include "wireup/control_endpoint.hpp"

namespace wireup {

std::uint32_t control_port_for(std::uint32_t master_port) {
  if (master_port + kControlPortOffset <= 65535) return master_port + kControlPortOffset;
  return master_port - kControlPortOffset;
}

std::vector<std::uint32_t> hello_args(const AgentHello& h) {
  if (!h.nproc) return {h.rank};
  if (!h.job || !h.step) return {h.rank, *h.nproc};
  return {h.rank, *h.nproc, *h.job, *h.step};
}

std::optional<AgentHello> parse_hello(const ControlMessage& m) {
  if (m.verb != ControlVerb::Hello || m.args.empty()) return std::nullopt;
  AgentHello h;
  h.rank = m.args[0];
  if (m.args.size() > 1) h.nproc = m.args[1];
  if (m.args.size() > 3) {
    h.job = m.args[2];
    h.step = m.args[3];
  }
  return h;
}

std::optional<std::string> foreign_hello(const AgentHello& h, std::uint32_t job,
                                         std::uint32_t step) {
  if (!h.job || !h.step || (*h.job == job && *h.step == step)) return std::nullopt;
  return "closing a control link from agent " + std::to_string(h.rank) + " of job " +
         std::to_string(*h.job) + " step " + std::to_string(*h.step) + ", not this step (" +
         std::to_string(job) + "." + std::to_string(step) +
         "): its control port is this one's (pass --control-port to one of them)";
}

std::optional<std::string> nproc_mismatch(const AgentHello& theirs, std::uint32_t ours) {
  if (theirs.nproc == ours) return std::nullopt;
  const std::string what =
      theirs.nproc ? "runs " + std::to_string(*theirs.nproc) + " worker(s)" : "did not say";
  return "agent " + std::to_string(theirs.rank) + " " + what + " but agent 0 runs " +
         std::to_string(ours) +
         ": without PMIx every node must run the same --nproc-per-node (ranks are node rank x "
         "nproc + local rank); run under `srun --mpi=pmix` for different counts";
}

std::string control_unreachable(const std::string& addr, std::uint32_t port, int waited_s,
                                const std::string& why) {
  return "cannot reach agent 0's control port at " + addr + ":" + std::to_string(port) +
         " within " + std::to_string(waited_s) + " s (" + why +
         "): agent 0 coordinates --max-restarts there; is agent 0 running with the same "
         "--max-restarts and --control-port, and is that port open between the nodes? "
         "(WIREUP_FENCE_TIMEOUT sets the wait)";
}

}  // namespace wireup
