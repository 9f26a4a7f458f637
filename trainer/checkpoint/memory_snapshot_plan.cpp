#include "checkpoint/memory_snapshot_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace wireup::train {

std::vector<std::int64_t> snapshots_to_delete(const std::vector<PresentSnapshot>& present,
                                              std::int64_t new_step) {
  std::int64_t keep = -1;
  for (const PresentSnapshot& p : present)
    if (p.complete && p.step < new_step) keep = std::max(keep, p.step);
  std::vector<std::int64_t> out;
  for (const PresentSnapshot& p : present)
    if (p.step != keep) out.push_back(p.step);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const char* to_string(ResumeSource s) {
  switch (s) {
    case ResumeSource::memory:
      return "memory";
    case ResumeSource::peer:
      return "peer";
    case ResumeSource::disk:
      return "disk";
    case ResumeSource::none:
      break;
  }
  return "none";
}

namespace {

// One step's view across the nodes, and the rule applied to it.
class StepCheck {
 public:
  StepCheck(const ResumeInputs& in, std::int64_t step) : in_(in), step_(step) {
    for (const NodeMemory& n : in.nodes) nodes_[n.node] = &n;
  }

  // The holder of each rank's part, or empty with reasons_ set.
  std::vector<std::string> run() {
    const SnapshotManifest* m = manifest_ = manifest();
    if (m == nullptr || !same_run(*m) || !same_layout(*m)) return {};
    std::vector<std::string> holder(in_.rank_node.size());
    for (std::size_t r = 0; r < holder.size(); ++r) holder[r] = holder_of(static_cast<int>(r));
    if (!reasons_.empty()) return {};
    return holder;
  }
  bool peer() const { return peer_; }
  const std::vector<std::string>& reasons() const { return reasons_; }
  // After a run() that found a holder for every rank: the manifest's parts.
  const std::vector<SnapshotPart>& parts() const { return manifest_->parts; }
  // After such a run(): the node of each rank's replica ("" when none).
  std::vector<std::string> replicas() const {
    std::vector<std::string> out(in_.rank_node.size());
    for (const SnapshotPart& p : manifest_->replicas)
      if (p.rank >= 0 && static_cast<std::size_t>(p.rank) < out.size())
        out[static_cast<std::size_t>(p.rank)] = p.node;
    return out;
  }

 private:
  std::string prefix() const { return "memory snapshot step " + std::to_string(step_); }
  void skip(const std::string& why) { reasons_.push_back(prefix() + ": " + why); }

  const SnapshotState* state_on(const std::string& node) const {
    const auto it = nodes_.find(node);
    if (it == nodes_.end() || !it->second->problem.empty()) return nullptr;
    for (const SnapshotState& s : it->second->snapshots)
      if (s.step == step_) return &s;
    return nullptr;
  }

  // The manifest all nodes holding this step agree on; every fault named.
  const SnapshotManifest* manifest() {
    const SnapshotManifest* m = nullptr;
    for (const NodeMemory& n : in_.nodes) {
      const SnapshotState* s = state_on(n.node);
      if (s == nullptr) continue;
      if (!s->problem.empty()) {
        reasons_.push_back(prefix() + " on node " + n.node + ": " + s->problem);
      } else if (m == nullptr) {
        m = &*s->manifest;
      } else if (to_text(*m) != to_text(*s->manifest)) {
        reasons_.push_back(prefix() + " on node " + n.node +
                           ": its manifest differs from another node's");
      }
    }
    if (m == nullptr && reasons_.empty()) skip("no node holds it complete");
    return reasons_.empty() ? m : nullptr;
  }

  bool same_run(const SnapshotManifest& m) {
    if (m.job_id != in_.job_id) skip("written by job " + m.job_id + ", this is job " + in_.job_id);
    if (m.uid != in_.uid)
      skip("written by uid " + std::to_string(m.uid) + ", this run's is " +
           std::to_string(in_.uid));
    if (const std::string why = identity_mismatch(m.identity, in_.identity); !why.empty())
      skip(why);
    if (m.rank_node.size() != in_.rank_node.size())
      skip("world size " + std::to_string(m.rank_node.size()) + ", this run " +
           std::to_string(in_.rank_node.size()));
    return reasons_.empty();
  }

  bool same_layout(const SnapshotManifest& m) {
    const std::set<std::string> now(in_.rank_node.begin(), in_.rank_node.end());
    const std::set<std::string> then(m.rank_node.begin(), m.rank_node.end());
    std::map<std::string, std::string> replaced, by;  // node then -> node now, and back
    for (std::size_t r = 0; r < m.rank_node.size(); ++r) {
      const std::string& was = m.rank_node[r];
      const std::string& is = in_.rank_node[r];
      if (was == is) continue;
      const bool one_to_one =
          replaced.emplace(was, is).first->second == is && by.emplace(is, was).first->second == was;
      if (now.count(was) == 0 && then.count(is) == 0 && one_to_one) continue;
      skip("layout differs: rank " + std::to_string(r) + " was on node " + was + ", now on " + is);
      return false;
    }
    return true;
  }

  std::string holder_of(int rank) {
    const std::string& node = in_.rank_node[static_cast<std::size_t>(rank)];
    const auto it = nodes_.find(node);
    const bool missing = it == nodes_.end() || !it->second->present;
    if (!missing) {
      const SnapshotState* s = state_on(node);
      if (s != nullptr && std::count(s->parts.begin(), s->parts.end(), rank) == 1) return node;
      const std::string why = !it->second->problem.empty()
                                  ? "its memory directory is unusable (" + it->second->problem + ")"
                              : s == nullptr ? "no snapshot of this step there"
                                             : "its part is not there";
      skip("rank " + std::to_string(rank) + " on node " + node + ": " + why);
      return "";
    }
    for (const NodeMemory& n : in_.nodes) {
      const SnapshotState* s = n.node == node ? nullptr : state_on(n.node);
      if (s != nullptr && std::count(s->replicas.begin(), s->replicas.end(), rank) == 1) {
        peer_ = true;
        return n.node;
      }
    }
    skip("rank " + std::to_string(rank) + " on node " + node +
         ": the node's memory is gone and no other node holds a replica of its part");
    return "";
  }

  const ResumeInputs& in_;
  std::int64_t step_;
  std::map<std::string, const NodeMemory*> nodes_;
  std::vector<std::string> reasons_;
  bool peer_ = false;
  const SnapshotManifest* manifest_ = nullptr;
};

}  // namespace

ResumeChoice choose_resume_source(const ResumeInputs& in) {
  ResumeChoice c;
  std::int64_t disk = -1;
  for (const std::int64_t s : in.disk_steps) disk = std::max(disk, s);
  std::set<std::int64_t, std::greater<>> steps;
  for (const NodeMemory& n : in.nodes) {
    if (!n.problem.empty()) c.skipped.push_back("memory of node " + n.node + ": " + n.problem);
    for (const SnapshotState& s : n.snapshots) steps.insert(s.step);
  }
  for (const std::int64_t step : steps) {
    if (step < disk) break;
    if (std::count(in.failed_steps.begin(), in.failed_steps.end(), step) != 0) continue;
    StepCheck check(in, step);
    std::vector<std::string> holder = check.run();
    if (!holder.empty()) {
      c.source = check.peer() ? ResumeSource::peer : ResumeSource::memory;
      c.step = step;
      c.holder = std::move(holder);
      c.expected = check.parts();
      c.replica = check.replicas();
      return c;
    }
    c.skipped.insert(c.skipped.end(), check.reasons().begin(), check.reasons().end());
  }
  if (disk >= 0) {
    c.source = ResumeSource::disk;
    c.step = disk;
  }
  return c;
}

std::optional<ResumeChoice> replica_fallback(const ResumeChoice& c,
                                             const std::vector<int>& failed) {
  if (c.source != ResumeSource::memory && c.source != ResumeSource::peer) return std::nullopt;
  if (failed.empty() || c.replica.size() != c.holder.size()) return std::nullopt;
  ResumeChoice next = c;
  for (const int r : failed) {
    if (r < 0 || static_cast<std::size_t>(r) >= c.holder.size()) return std::nullopt;
    const std::string& replica = c.replica[static_cast<std::size_t>(r)];
    if (replica.empty() || replica == c.holder[static_cast<std::size_t>(r)]) return std::nullopt;
    next.holder[static_cast<std::size_t>(r)] = replica;
  }
  next.source = ResumeSource::peer;
  return next;
}

std::vector<std::string> resume_lines(const ResumeChoice& c) {
  std::vector<std::string> lines;
  lines.push_back("[resume] step=" + std::to_string(c.step) + " source=" + to_string(c.source));
  for (const std::string& why : c.skipped) lines.push_back("[resume] skipped: " + why);
  return lines;
}

}  // namespace wireup::train
