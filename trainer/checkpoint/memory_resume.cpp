// MemoryCheckpointer's resume side (memory_checkpointer.hpp): what every
// node holds, the choice, and a part read from this node's memory or sent by
// the rank of the next node that holds its replica.
#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "checkpoint/memory_checkpointer.hpp"
#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_part.hpp"
#include "wireup/text.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

at::Tensor byte_view(std::string& s) {
  return at::from_blob(s.data(), {static_cast<std::int64_t>(s.size())}, at::kByte);
}

// "rank 1's replica on node n1, rank 3's on node n0".
std::string replica_list(const ResumeChoice& c, const std::vector<int>& ranks) {
  std::string s;
  for (const int r : ranks)
    s += (s.empty() ? "" : ", ") + ("rank " + std::to_string(r)) +
         (s.empty() ? "'s replica" : "'s") + " on node " + c.holder[static_cast<std::size_t>(r)];
  return s;
}

}  // namespace

ResumeChoice MemoryCheckpointer::choose(const std::vector<std::int64_t>& disk_steps) {
  // A node's first rank scans its memory, checking the checksum of every part
  // it holds, and of the replicas too when some node's memory is gone (only
  // then can a replica be read).
  const std::string here = !leader_ ? "" : node_memory_present(root_, node_) ? "1" : "0";
  bool node_gone = false;
  for (const auto& t : gather_text(here)) node_gone = node_gone || t == "0";
  const HeldFiles held = node_gone ? HeldFiles::parts_and_replicas : HeldFiles::parts;
  const std::string mine = leader_ ? to_text(scan_node_memory(root_, node_, job_, held)) : "";
  std::string steps;
  for (const std::int64_t s : disk_steps) steps += (steps.empty() ? "" : " ") + std::to_string(s);
  const auto found = gather_text(mine);
  const auto disk = gather_text(w_.rank == 0 ? steps : std::string());
  ResumeInputs in;
  for (const auto& t : found) {
    if (t.empty()) continue;
    std::string why;
    auto m = parse_node_memory(t, why);
    if (!m) throw std::logic_error("memory snapshots: " + why);
    in.nodes.push_back(std::move(*m));
  }
  for (const auto& s : split(disk[0], ' '))
    if (const auto v = parse_uint(s)) in.disk_steps.push_back(static_cast<std::int64_t>(*v));
  in.rank_node = rank_node_;
  in.job_id = job_;
  in.uid = ::getuid();
  in.identity = identity_;
  in.failed_steps = inputs_.failed_steps;  // a step whose load failed stays passed over
  inputs_ = in;
  return choose_resume_source(in);
}

// This rank's part, where c.holder places it, for the ranks r with need[r]:
// from this node's memory, or (its holder another node: its node's memory
// gone, or its own part failed at the load) sent by the rank that wrote its
// replica, (rank + local_world) % world. Every replica transfer runs in rank
// order, each between its two ranks; its bytes follow only a size that is the
// manifest's (both ends check). What is read or received is checked against
// the manifest's size and crc32c: "" when it could not be had or is not those
// bytes (`why` set); a replica this rank could not send: `sender_why`.
std::string MemoryCheckpointer::read_part(const ResumeChoice& c, const std::vector<bool>& need,
                                          std::string& why, std::string& sender_why) {
  why.clear();
  sender_why.clear();
  const fs::path snap = root_ / node_ / snapshot_dir_name(c.step);
  std::string part;
  for (int r = 0; r < w_.world; ++r) {
    if (!need[r] || c.holder[r] == rank_node_[r]) continue;  // in its own node's memory
    const int sender = (r + w_.local_world) % w_.world;
    const SnapshotPart& want = c.expected[static_cast<std::size_t>(r)];
    if (w_.rank == sender) {
      std::string sent, problem;
      if (rank_node_[sender] == c.holder[r])
        sent = read_checked_part(snap / replica_file_name(r), want, problem);
      if (!problem.empty())  // the receiver names the rank that had nothing to send; this says why
        sender_why += (sender_why.empty() ? "" : "; ") +
                      ("rank " + std::to_string(sender) + "'s replica of rank " +
                       std::to_string(r) + " " + problem);
      at::Tensor size = at::full({1}, static_cast<std::int64_t>(sent.size()), at::kLong);
      peer_->exchange(size, r, at::Tensor(), r);
      if (!sent.empty()) peer_->exchange(byte_view(sent), r, at::Tensor(), r);
    } else if (w_.rank == r) {
      part = receive_replica(sender, want, c.holder[r], why);
    }
  }
  if (need[w_.rank] && c.holder[w_.rank] == rank_node_[w_.rank]) {
    part = read_checked_part(snap / part_file_name(w_.rank),
                             c.expected[static_cast<std::size_t>(w_.rank)], why);
    if (part.empty()) why = "rank " + std::to_string(w_.rank) + "'s part " + why;
  }
  return part;
}

// This rank's replica from `sender`: a size other than the manifest's is
// refused before anything is allocated (the sender then sends nothing), and
// bytes that are not the manifest's are dropped. "" with `why` set then.
std::string MemoryCheckpointer::receive_replica(int sender, const SnapshotPart& want,
                                                const std::string& holder, std::string& why) {
  at::Tensor size = at::zeros({1}, at::kLong);
  peer_->exchange(at::Tensor(), sender, size, sender);
  const std::int64_t n = size.item<std::int64_t>();
  const std::string from = "rank " + std::to_string(w_.rank) + "'s replica from rank " +
                           std::to_string(sender) + " (node " + rank_node_[sender] + ")";
  if (n == 0) {
    why = "rank " + std::to_string(sender) + " on node " + rank_node_[sender] +
          " could not send the replica of rank " + std::to_string(w_.rank) + " (node " + holder +
          " holds it)";
    return "";
  }
  if (const std::string bad = replica_size_problem(n, want); !bad.empty()) {
    why = from + ": " + bad + ", refused";
    return "";
  }
  std::string part(static_cast<std::size_t>(n), '\0');
  peer_->exchange(at::Tensor(), sender, byte_view(part), sender);
  if (const std::string bad = part_bytes_problem(part.data(), part.size(), want); !bad.empty()) {
    why = from + ": " + bad;
    return "";
  }
  return part;
}

std::vector<int> MemoryCheckpointer::failed_ranks(const std::string& why,
                                                  const std::string& sender_why, std::string& all) {
  std::vector<int> failed;
  const std::string mine = (why.empty() ? "0" : "1") + why +
                           (!why.empty() && !sender_why.empty() ? "; " : "") + sender_why;
  const std::vector<std::string> reasons = gather_text(mine);
  for (std::size_t r = 0; r < reasons.size(); ++r) {
    if (reasons[r].size() > 1) all += (all.empty() ? "" : "; ") + reasons[r].substr(1);
    if (reasons[r].rfind('1', 0) == 0) failed.push_back(static_cast<int>(r));
  }
  return failed;
}

// WIREUP_TEST_AFTER_MEMORY_SCAN=PATH (tests only): between the resume's scan
// and its load, world rank 0 creates PATH.scanned and every rank waits until
// PATH exists (300 s at most), so that a test can change what the scan passed.
void MemoryCheckpointer::pause_after_scan() const {
  if (after_scan_.empty()) return;
  if (w_.rank == 0) std::ofstream(after_scan_ + ".scanned").put('\n');
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  while (!fs::exists(after_scan_)) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("WIREUP_TEST_AFTER_MEMORY_SCAN: " + after_scan_ +
                               " did not appear within 300 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

MemoryCheckpointer::Loaded MemoryCheckpointer::load(const ResumeChoice& chosen) {
  if (chosen.expected.size() != static_cast<std::size_t>(w_.world) ||
      chosen.holder.size() != static_cast<std::size_t>(w_.world))
    throw std::logic_error("memory snapshots: a resume choice without the manifest's parts");
  pause_after_scan();
  Loaded out;
  ResumeChoice c = chosen;
  std::vector<bool> need(static_cast<std::size_t>(w_.world), true);
  std::string why, sender_why;
  std::string part = read_part(c, need, why, sender_why);
  std::vector<int> failed = failed_ranks(why, sender_why, out.why);
  if (!failed.empty()) {
    // What failed where the scan found it: its replica on another node next.
    const std::optional<ResumeChoice> next = replica_fallback(c, failed);
    if (!next) return out;
    out.notes.push_back("[memory] snapshot step " + std::to_string(c.step) + ": " + out.why +
                        "; falling back to " + replica_list(*next, failed));
    out.why.clear();
    for (int r = 0; r < w_.world; ++r) need[r] = std::count(failed.begin(), failed.end(), r) != 0;
    c = *next;
    std::string again = read_part(c, need, why, sender_why);
    if (need[w_.rank]) part = std::move(again);
    if (!failed_ranks(why, sender_why, out.why).empty()) return out;
  }
  std::uint64_t at = 0;
  std::optional<PartHeader> h;
  why.clear();
  if (!part.empty()) {
    std::string bad;
    h = parse_part_header(part.data(), part.size(), at, bad);
    const std::string me = "rank " + std::to_string(w_.rank) + "'s part";
    if (!h)
      why = me + ": " + bad;
    else if (h->step != c.step)
      why = me + " is of step " + std::to_string(h->step);
    else if (const std::string d = part_layout_mismatch(*h, layout_header()); !d.empty())
      why = me + ": " + d;
  }
  // Every rank loads, or none: the reasons of all that cannot.
  if (!failed_ranks(why, "", out.why).empty()) return out;
  const char* p = part.data() + at;
  for (UnitShard& u : state_.units)
    for (at::Tensor& t : u.tensors) {
      at::Tensor from = at::from_blob(const_cast<char*>(p), {u.numel}, at::kFloat);
      t.copy_(from);
      p += static_cast<std::size_t>(u.numel) * 4;
    }
  state_.restored(h->optimizer_steps);
  out.data_position = h->data_position;
  out.source = c.source;
  return out;
}

ResumeChoice MemoryCheckpointer::choose_again(std::int64_t failed) {
  inputs_.failed_steps.push_back(failed);
  return choose_resume_source(inputs_);
}

void MemoryCheckpointer::remove_on_success() {
  wait();
  if (peer_) peer_->barrier();  // every rank trained its last step
  if (!leader_) return;
  for (const std::string& left : remove_snapshot_dir(root_, node_, job_))
    std::fprintf(stderr, "wireup-train: memory snapshots: left %s (not ours to remove)\n",
                 left.c_str());
}

}  // namespace wireup::train
