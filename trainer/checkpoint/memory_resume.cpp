// MemoryCheckpointer's resume side (memory_checkpointer.hpp): what every
// node holds, the choice, and a part read from this node's memory or sent by
// the rank of the next node that holds its replica.
#include <ATen/ATen.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

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
  return choose_resume_source(in);
}

// This rank's part: from this node's memory, or (its node's memory gone) sent
// by the rank that wrote its replica, (rank + local_world) % world. Every
// replica transfer runs in rank order, each between its two ranks; its bytes
// follow only a size that is the manifest's (both ends check). What is read or
// received is checked against the manifest's size and crc32c: "" when it could
// not be had or is not those bytes (`why` set).
std::string MemoryCheckpointer::read_part(const ResumeChoice& c, std::string& why) {
  const fs::path snap = root_ / node_ / snapshot_dir_name(c.step);
  std::string part;
  for (int r = 0; r < w_.world; ++r) {
    if (c.holder[r] == rank_node_[r]) continue;  // in its own node's memory
    const int sender = (r + w_.local_world) % w_.world;
    const SnapshotPart& want = c.expected[static_cast<std::size_t>(r)];
    if (w_.rank == sender) {
      std::string sent, problem;
      if (rank_node_[sender] == c.holder[r])
        sent = read_checked_part(snap / replica_file_name(r), want, problem);
      at::Tensor size = at::full({1}, static_cast<std::int64_t>(sent.size()), at::kLong);
      peer_->exchange(size, r, at::Tensor(), r);
      if (!sent.empty()) peer_->exchange(byte_view(sent), r, at::Tensor(), r);
    } else if (w_.rank == r) {
      part = receive_replica(sender, want, c.holder[r], why);
    }
  }
  if (c.holder[w_.rank] == rank_node_[w_.rank]) {
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

std::optional<std::string> MemoryCheckpointer::load(const ResumeChoice& c, std::string& why) {
  why.clear();
  if (c.expected.size() != static_cast<std::size_t>(w_.world))
    throw std::logic_error("memory snapshots: a resume choice without the manifest's parts");
  std::string part = read_part(c, why);
  std::uint64_t at = 0;
  std::optional<PartHeader> h;
  if (!part.empty()) {
    std::string bad;
    h = parse_part_header(part.data(), part.size(), at, bad);
    const PartHeader mine = layout_header();
    if (!h)
      why = "rank " + std::to_string(w_.rank) + "'s part: " + bad;
    else if (h->step != c.step)
      why = "rank " + std::to_string(w_.rank) + "'s part is of step " + std::to_string(h->step);
    else if (const std::string d = part_layout_mismatch(*h, mine); !d.empty())
      why = "rank " + std::to_string(w_.rank) + "'s part: " + d;
  }
  // Every rank loads, or none: the reasons of all that cannot.
  std::string reasons;
  for (const auto& t : gather_text(why))
    if (!t.empty()) reasons += (reasons.empty() ? "" : "; ") + t;
  why = reasons;
  if (!why.empty()) return std::nullopt;
  const char* p = part.data() + at;
  for (UnitShard& u : state_.units)
    for (at::Tensor& t : u.tensors) {
      const auto n = static_cast<std::size_t>(u.numel);
      at::Tensor from = at::from_blob(const_cast<char*>(p), {u.numel}, at::kFloat);
      t.copy_(from);
      p += n * 4;
    }
  state_.restored(h->optimizer_steps);
  return h->data_position;
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
