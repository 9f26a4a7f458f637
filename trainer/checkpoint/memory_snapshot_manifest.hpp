#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checkpoint/run_identity.hpp"

// One memory snapshot's manifest and its commit marker, and what a node finds
// in its memory directory (docs/memory-snapshots.md). Plain C++: no Torch.
//
//   DIR/<node>/snap-00000040/
//     rank-00002.bin           the full training state of rank 2 (a rank of this node),
//     rank-00003.bin           opaque bytes to this library (written by the trainer)
//     replica-rank-00000.bin   a copy of rank 0's part, held for another node
//     manifest                 the whole snapshot, the same text on every node
//     complete                 written last: "complete <checksum of manifest>\n"
//
// manifest (text, one record a line, fields separated by one space):
//
//   wireup-memory-snapshot 3
//   job 4242                                 SLURM_JOB_ID (digits)
//   uid 1000                                 the user who wrote it
//   step 40
//   identity {"lora":null,"model":{...}}     the run's RunIdentity (run_identity.hpp): what
//                                            a durable checkpoint records of it, one line
//   world_size 4
//   rank 0 node a1 bytes 1024 crc32c <hex>   world_size lines, ranks 0.. in order;
//   ...                                      the part lives on `node` as rank-0000R.bin
//   replica 0 node a2 bytes 1024 crc32c <hex>  0 or more, distinct ranks, on a node other
//   ...                                      than the rank's own, bytes and crc32c its part's
//   end
//
// A snapshot counts only when `complete` is present and names the manifest's
// checksum, and every file this node holds checks (size, checksum); a resume
// with every node's memory present checks the parts alone.
namespace wireup::train {

// One rank's part (or a replica of it) and the node whose memory holds it.
struct SnapshotPart {
  int rank = 0;
  std::string node;
  std::uint64_t bytes = 0;
  std::string checksum;  // crc32c_quarters_hex (wireup/crc32c.hpp)
};

struct SnapshotManifest {
  std::string job_id;
  std::uint64_t uid = 0;
  std::int64_t step = 0;
  std::vector<std::string> rank_node;  // the layout: the node of each rank; world size = size
  std::vector<SnapshotPart> parts;     // one per rank, in rank order, on rank_node[rank]
  std::vector<SnapshotPart> replicas;  // on a node other than rank_node[rank]
  // The run's family, shape, rope scaling and adapters: a resume's must be
  // the same (identity_mismatch). The manifest's identity line.
  RunIdentity identity;
};

// The largest manifest read (a million ranks with replicas: ~250 MB) and
// world size accepted.
constexpr std::uint64_t kMaxSnapshotManifestBytes = 256ull << 20;
constexpr int kMaxSnapshotWorldSize = 1 << 20;

std::string to_text(const SnapshotManifest& m);
// Strict: every line as above, in order, nothing after `end`; the identity
// as run_identity_from_json reads it; node names
// is_safe_node_name; crc32c 32 lowercase hex digits. nullopt with `why` set
// ("line 6: expected rank 1, found rank 2") when anything is off.
std::optional<SnapshotManifest> parse_snapshot_manifest(const std::string& text, std::string& why);

// Commits a snapshot directory whose parts this node holds are written:
// `manifest`, then `complete` (both private files, durable).
void commit_snapshot(const std::filesystem::path& snap_dir, const SnapshotManifest& m);

// What one node finds of one snapshot in its memory.
struct SnapshotState {
  std::int64_t step = 0;
  std::string problem;  // "" when complete and every file of this node checks
  std::optional<SnapshotManifest> manifest;
  std::vector<int> parts;     // ranks whose own part is here and checks
  std::vector<int> replicas;  // ranks whose replica is here and checks
};

// Which of a node's files a scan checksums: the replicas matter only when some
// node's memory is gone (the resume reads them for its ranks alone).
enum class HeldFiles { parts, parts_and_replicas };

// Checks DIR/<node>/snap-N: `complete` names the manifest's checksum, the
// manifest parses and names this step, job and user, and every part (and,
// with parts_and_replicas, every replica) it places on `node` has its size and
// checksum (crc32c_quarters_hex). Never follows a symlink. `problem` names the first fault ("part
// of rank 3 fails its checksum", "no complete marker (a snapshot in progress or cut short)").
SnapshotState inspect_snapshot(const std::filesystem::path& snap_dir, std::int64_t step,
                               const std::string& node, const std::string& job_id,
                               HeldFiles held = HeldFiles::parts_and_replicas);

// What one node's memory holds: present is false when DIR/<node> does not
// exist (a replaced node, memory lost); problem is set when it exists but is
// not a private directory of this user (then no snapshot of it is used).
struct NodeMemory {
  std::string node;
  bool present = false;
  std::string problem;
  std::vector<SnapshotState> snapshots;  // newest first
};
NodeMemory scan_node_memory(const std::filesystem::path& root, const std::string& node,
                            const std::string& job_id,
                            HeldFiles held = HeldFiles::parts_and_replicas);
// NodeMemory::present without the scan: DIR/<node> exists (as any file type).
bool node_memory_present(const std::filesystem::path& root, const std::string& node);

}  // namespace wireup::train

namespace wireup::train {

// What one node found, as text for the ranks' gather at a resume (the node's
// first rank scans, every rank decides): strings as "KEY LEN\n<LEN bytes>\n".
//   node a1 / present 1 / problem 0 / snapshots 1
//   snapshot 40 / problem 0 / manifest 812 <text> / parts 2 3 / replicas 0
std::string to_text(const NodeMemory& m);
// Strict; nullopt with `why` set when the text is not one NodeMemory.
std::optional<NodeMemory> parse_node_memory(const std::string& text, std::string& why);

}  // namespace wireup::train
