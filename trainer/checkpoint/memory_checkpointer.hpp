#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "checkpoint/checkpointer.hpp"
#include "checkpoint/memory_snapshot_dir.hpp"
#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_plan.hpp"
#include "comm/peer_comm.hpp"
#include "comm/world_layout.hpp"
#include "config/component_configs.hpp"

namespace wireup::train {

struct PartHeader;

// Memory snapshots (docs/memory-snapshots.md): every --memory_checkpoint_freq
// steps each rank writes its whole training state (a TrainingState: its
// parameter and moment slices, the optimizer's step count, the data
// position) into DIR/<node>/snap-N/rank-R.bin, and sends a copy to rank
// (R + local_world) % world, a rank of the next node, which holds it as
// replica-rank-R.bin. The copy travels over a Gloo group of its own (the
// "memsnap" peer group), so the whole snapshot runs in a background thread
// while training goes on; only the next optimizer update waits, until the
// live shards are copied out. Each node's first rank commits the snapshot
// (manifest, complete) once every rank's part and replica is written and
// checksummed.
class MemoryCheckpointer {
 public:
  // Collective (every rank, at start): DIR claimed for this job (InputError
  // for another job's or user's, a symlink, too little room for two
  // snapshots), the ranks' nodes gathered, the peer group made. `identity`:
  // this run's family, shape, rope scaling and adapters, which each manifest
  // records and a resume must match.
  MemoryCheckpointer(MemorySnapshotPolicy policy, const WorldLayout& w, TrainingState state,
                     RunIdentity identity, const EnvLookup& env);
  ~MemoryCheckpointer();  // waits for a snapshot in flight

  // After optimizer step `step`: starts snapshot `step` every freq steps.
  void end_of_step(std::int64_t step, const std::string& data_position);
  // Before the optimizer changes the shards: waits until a snapshot started
  // has copied them.
  void before_update();
  // Waits for a snapshot in flight to be committed (or to fail).
  void wait();

  // --resume_from_checkpoint auto (collective): what every node holds, and
  // the newest state usable by every rank among memory, a peer's replica and
  // the durable checkpoints' steps `disk_steps` (rank 0's list counts).
  ResumeChoice choose(const std::vector<std::int64_t>& disk_steps);
  // Loads memory or peer choice `c` into the state (collective). Every byte
  // loaded is checked against the manifest's size and CRC-32C; a part that
  // fails where c.holder places it (changed since the scan, unreadable, a
  // transfer refused) is taken from its replica on another node instead
  // (replica_fallback, a note saying so). The state is untouched when a rank
  // still has no usable part: then `why` names every rank's reason.
  struct Loaded {
    std::optional<std::string> data_position;  // loaded: where the data resumes
    ResumeSource source = ResumeSource::none;  // memory, or peer where a replica stood in
    std::vector<std::string> notes;            // "[memory] ..." lines: a part that failed
    std::string why;                           // not loaded: why
  };
  Loaded load(const ResumeChoice& c);
  // After a load of step `failed` that did not succeed: the choice again over
  // what the last choose() gathered, that step passed over (no new scan; the
  // same on every rank).
  ResumeChoice choose_again(std::int64_t failed);
  // The run trained every step: this node's snapshots removed (its first
  // rank), after every rank got here.
  void remove_on_success();

  const std::filesystem::path& root() const { return root_; }
  const std::string& node() const { return node_; }
  int snapshots() const { return started_; }
  double stall_seconds() const { return stall_s_; }
  // The writer thread's wall and CPU seconds over all snapshots (read after wait()).
  double write_seconds() const { return write_s_; }
  double writer_cpu_seconds() const { return writer_cpu_s_; }
  std::string describe() const;  // the [memory] line

 private:
  void snapshot(std::int64_t step, const std::string& data_position);
  void serialize(std::int64_t step, const std::string& data_position);
  void write_and_commit(std::int64_t step);
  std::pair<std::size_t, std::string> exchange_replica(const std::filesystem::path& file,
                                                       std::string& problem);
  void prepare_snapshot_dir(std::int64_t step);
  std::vector<std::string> files_of_node() const;
  SnapshotManifest manifest_of(std::int64_t step, const std::vector<std::string>& written) const;
  std::vector<std::string> gather_text(const std::string& mine);
  // Runs `step` on every rank; when it throws InputError on any, every rank
  // throws one naming each rank's reason.
  void agree(const std::function<void()>& step);
  // This rank's part when need[rank], from where c.holder places it; the
  // transfers of every rank r with need[r] run on the ranks that send them.
  // `sender_why`: a replica this rank could not send, and why.
  std::string read_part(const ResumeChoice& c, const std::vector<bool>& need, std::string& why,
                        std::string& sender_why);
  // Gathered: every rank's reasons into `all`; the ranks without a part (`why` set).
  std::vector<int> failed_ranks(const std::string& why, const std::string& sender_why,
                                std::string& all);
  void pause_after_scan() const;  // WIREUP_TEST_AFTER_MEMORY_SCAN (tests only)
  std::string receive_replica(int sender, const SnapshotPart& want, const std::string& holder,
                              std::string& why);
  PartHeader layout_header() const;  // this rank's part's header, step fields empty
  std::uint64_t part_bytes_estimate() const;

  MemorySnapshotPolicy policy_;
  WorldLayout w_;
  TrainingState state_;
  RunIdentity identity_;
  std::filesystem::path root_;
  std::string node_, job_;
  bool leader_ = false;                      // this node's first rank
  int replica_to_ = -1, replica_from_ = -1;  // -1: one node, no replica
  std::vector<std::string> rank_node_;
  std::unique_ptr<PeerComm> peer_;
  ResumeInputs inputs_;     // what the last choose() gathered
  std::string after_scan_;  // WIREUP_TEST_AFTER_MEMORY_SCAN: a test's pause before the load
  std::thread writer_;
  std::future<void> copied_;
  std::vector<char> part_;  // reused from snapshot to snapshot
  int started_ = 0;
  double stall_s_ = 0;
  double write_s_ = 0, writer_cpu_s_ = 0;  // written by the writer thread only
};

}  // namespace wireup::train
