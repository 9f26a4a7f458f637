#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/memory_snapshot_manifest.hpp"

// The decisions of memory snapshots, as pure functions (docs/memory-snapshots.md):
// which snapshots a node deletes when a new one starts, and which state a
// resume loads (memory, a peer's replica, or the durable checkpoint).
namespace wireup::train {

// Retention: a node keeps only the newest complete snapshot and the one in
// progress. When a snapshot of `new_step` starts, every snapshot present but
// the newest complete one older than `new_step` is deleted: older ones,
// incomplete ones, newer ones (a resume went back past them), and an earlier
// attempt at `new_step` itself (started afresh). Ascending steps.
struct PresentSnapshot {
  std::int64_t step = 0;
  bool complete = false;
};
std::vector<std::int64_t> snapshots_to_delete(const std::vector<PresentSnapshot>& present,
                                              std::int64_t new_step);

enum class ResumeSource { none, memory, peer, disk };
// "none", "memory", "peer", "disk".
const char* to_string(ResumeSource s);

struct ResumeInputs {
  // What each node of this run found in its memory (scan_node_memory on each
  // node, gathered). A node of rank_node absent here counts as missing.
  std::vector<NodeMemory> nodes;
  // The steps of the durable checkpoints that verify.
  std::vector<std::int64_t> disk_steps;
  // This run's layout: the node of each rank (world size = size).
  std::vector<std::string> rank_node;
  std::string job_id;
  std::uint64_t uid = 0;
  // This run's family, shape, rope scaling and adapters: a snapshot whose
  // manifest records another is not used (identity_mismatch).
  RunIdentity identity;
  // Memory steps whose load failed after the scan had passed them (a part or
  // replica changed since, a transfer refused): passed over, with no reason
  // of their own (the load's [memory] line named it).
  std::vector<std::int64_t> failed_steps;
};

struct ResumeChoice {
  ResumeSource source = ResumeSource::none;
  std::int64_t step = 0;
  // Every newer state passed over, and why: "memory snapshot step 40 on node
  // a1: part of rank 3 (rank-00003.bin) fails its checksum", "memory snapshot
  // step 40: world size 4, this run 2", "memory snapshot step 40: saved from a
  // different model shape: layers 2, this run 4".
  std::vector<std::string> skipped;
  // memory or peer: for each rank, the node whose memory holds its part (its
  // own node; for a rank of a node whose memory is gone, the replica's holder).
  std::vector<std::string> holder;
  // memory or peer: for each rank, its part's size and checksum as the
  // manifest records them; load() checks the bytes it reads or receives
  // against them (a replica's are its part's).
  std::vector<SnapshotPart> expected;
  // memory or peer: for each rank, the node the manifest places a replica of
  // its part on ("" when none): where a load turns when the part it reads
  // where `holder` says fails (replica_fallback).
  std::vector<std::string> replica;
};

// Newest step wins among the states usable by every rank. Step S comes from
// memory when the snapshot's job, user, identity, world size and layout are this run's
// and every rank's node holds its own checked part of S, or (only for a node
// whose DIR/<node> is missing) another node holds a checked replica of it:
// then the source is "peer". Any node holding S incomplete or corrupt
// disqualifies S (the next newest state is tried). Layout: the same world
// size, and every rank on the same node as before, except that the ranks of
// a replaced node (a name the snapshot does not know) may stand where a node
// the run no longer has stood. A durable checkpoint of the same step as a
// usable memory snapshot loses to it (memory is faster to read).
ResumeChoice choose_resume_source(const ResumeInputs& in);

// The load's fallback within one step, in the scan's order (a node's own part,
// then a peer's replica): after a load of `c` in which the ranks `failed`
// could not have their part where c.holder places it (it changed since the
// scan, could not be read, or its transfer was refused), the same step with
// each of them taken from its replica instead (source peer). nullopt when one
// of them has no replica on a node other than its holder (none recorded, or
// the replica was what failed): then the next newest state is tried
// (choose_resume_source with the step in failed_steps).
std::optional<ResumeChoice> replica_fallback(const ResumeChoice& c, const std::vector<int>& failed);

// "[resume] step=40 source=peer" (the first line; skipped states follow as
// "[resume] skipped: REASON" lines).
std::vector<std::string> resume_lines(const ResumeChoice& c);

}  // namespace wireup::train
