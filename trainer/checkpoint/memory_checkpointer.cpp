#include "checkpoint/memory_checkpointer.hpp"

#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_part.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/text.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

std::chrono::milliseconds timeout_of(const MemorySnapshotPolicy& p) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(p.io_timeout_s * 1000));
}

bool all_on_cpu(const TrainingState& s) {
  for (const UnitShard& u : s.units)
    for (const at::Tensor& t : u.tensors)
      if (!t.is_cpu()) return false;
  return true;
}

// The thread's CPU clock beside the wall clock, in seconds.
struct Clocks {
  double wall, cpu;
};
Clocks clocks_now() {
  timespec cpu{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
  return {
      std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(),
      static_cast<double>(cpu.tv_sec) + static_cast<double>(cpu.tv_nsec) * 1e-9};
}

// Runs `what`: the text of what it threw, or "".
std::string failure_of(const std::function<void()>& what) {
  try {
    what();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

bool is_regular(const fs::path& p) {
  std::error_code ec;
  return fs::symlink_status(p, ec).type() == fs::file_type::regular;
}

}  // namespace

MemoryCheckpointer::MemoryCheckpointer(MemorySnapshotPolicy policy, const WorldLayout& w,
                                       TrainingState state, RunIdentity identity,
                                       const EnvLookup& env)
    : policy_(std::move(policy)), w_(w), state_(std::move(state)), identity_(std::move(identity)) {
  root_ = memory_snapshot_root(policy_.dir, env);
  node_ = node_name(env);
  const auto job = env("SLURM_JOB_ID");
  if (!job)
    throw InputError(
        "--memory_checkpoint_freq: memory snapshots belong to one Slurm job, and "
        "SLURM_JOB_ID is not set: run under sbatch, salloc or srun, or set "
        "--memory_checkpoint_freq 0");
  job_ = *job;
  after_scan_ = env("WIREUP_TEST_AFTER_MEMORY_SCAN").value_or("");
  leader_ = w.local_rank == 0;
  if (w.world % w.local_world != 0)
    throw InputError("memory snapshots: WORLD_SIZE " + std::to_string(w.world) +
                     " is not a multiple of LOCAL_WORLD_SIZE " + std::to_string(w.local_world) +
                     ": they need the same number of ranks on every node");
  if (w.world > w.local_world) {  // a replica on the next node
    replica_to_ = (w.rank + w.local_world) % w.world;
    replica_from_ = (w.rank - w.local_world + w.world) % w.world;
  }
  peer_ = make_peer_comm(w, "memsnap", timeout_of(policy_));
  rank_node_ = gather_text(node_);
  for (int r = 0; r < w.world; ++r)
    if (rank_node_[r] != rank_node_[r - r % w.local_world])
      throw InputError("memory snapshots: rank " + std::to_string(r) + " is on node " +
                       rank_node_[r] + " but rank " + std::to_string(r - r % w.local_world) +
                       " on " + rank_node_[r - r % w.local_world] +
                       ": ranks must be numbered node by node");
  // DIR and its owner marker: world rank 0 first (a DIR that nodes share,
  // emulated ones, is claimed once), then every node's first rank; then the
  // room for two snapshots of each node. Every rank stops on a refusal.
  // The default DIR's refusal names the fixes (a squatter took the name first).
  const auto claim = policy_.dir.empty() ? claim_default_root : claim_root;
  agree([&] {
    if (w.rank == 0) claim(root_, job_);
  });
  agree([&] {
    if (leader_ && w.rank != 0) claim(root_, job_);
  });
  const auto sizes = gather_text(std::to_string(part_bytes_estimate()));
  std::uint64_t node_bytes = 0;  // this node's parts and the replicas it holds
  for (int r = 0; r < w.world; ++r) {
    const bool here = rank_node_[r] == node_;
    const bool held = replica_to_ >= 0 && rank_node_[(r + w.local_world) % w.world] == node_;
    if (here || held) node_bytes += (here && held ? 2 : 1) * std::stoull(sizes[r]);
  }
  agree([&] {
    if (leader_) check_capacity(root_, node_bytes);
  });
}

void MemoryCheckpointer::agree(const std::function<void()>& step) {
  std::string mine;
  try {
    step();
  } catch (const InputError& e) {
    mine = "rank " + std::to_string(w_.rank) + " (node " + node_ + "): " + e.what();
  }
  std::string all;
  for (const auto& t : gather_text(mine))
    if (!t.empty()) all += (all.empty() ? "" : "; ") + t;
  if (!all.empty()) throw InputError("memory snapshots (--memory_checkpoint_dir): " + all);
}

MemoryCheckpointer::~MemoryCheckpointer() {
  try {
    wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup-train: memory snapshot: %s\n", e.what());
  }
}

PartHeader MemoryCheckpointer::layout_header() const {
  PartHeader h;
  h.world_size = w_.world;
  h.rank = w_.rank;
  h.tensors = state_.tensor_names;
  for (const UnitShard& u : state_.units) h.units.push_back({u.layout.name, u.offset, u.numel});
  return h;
}

std::uint64_t MemoryCheckpointer::part_bytes_estimate() const {
  const PartHeader h = layout_header();
  return to_text(h).size() + 4096 + h.tensor_bytes();  // 4 KiB: the data position
}

std::string MemoryCheckpointer::describe() const {
  std::string replica = replica_to_ >= 0 ? "replica_to=rank " + std::to_string(replica_to_) +
                                               " (node " + rank_node_[replica_to_] + ")"
                                         : std::string("replica=none (one node)");
  return "[memory] snapshots every " + std::to_string(policy_.freq) +
         " steps dir=" + io::shown(root_) + " node=" + node_ +
         " part=" + human_bytes(part_bytes_estimate()) + " " + replica;
}

void MemoryCheckpointer::wait() {
  if (writer_.joinable()) writer_.join();
}

void MemoryCheckpointer::before_update() {
  if (!copied_.valid()) return;
  const auto t0 = std::chrono::steady_clock::now();
  copied_.get();  // rethrows a failed copy: a bug, not a snapshot lost
  stall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void MemoryCheckpointer::end_of_step(std::int64_t step, const std::string& data_position) {
  if (policy_.freq <= 0 || step % policy_.freq != 0) return;
  snapshot(step, data_position);
}

void MemoryCheckpointer::snapshot(std::int64_t step, const std::string& data_position) {
  const auto t0 = std::chrono::steady_clock::now();
  wait();  // at most one snapshot in flight
  ++started_;
  std::promise<void> copied;
  copied_ = copied.get_future();
  // Device shards are copied out here, on the training thread (its streams);
  // host shards by the writer, while the next step computes.
  const bool here = !all_on_cpu(state_);
  if (here) {
    serialize(step, data_position);
    copied.set_value();
  }
  stall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  writer_ = std::thread([this, step, data_position, here, copied = std::move(copied)]() mutable {
    const Clocks start = clocks_now();
    const auto account = [&] {
      const Clocks end = clocks_now();
      write_s_ += end.wall - start.wall;
      writer_cpu_s_ += end.cpu - start.cpu;
    };
    if (!here) {
      try {
        serialize(step, data_position);
        copied.set_value();
      } catch (...) {
        copied.set_exception(std::current_exception());
        account();
        return;
      }
    }
    try {
      write_and_commit(step);
      const Clocks end = clocks_now();
      if (w_.rank == 0) {
        std::printf("[memory] snapshot step=%lld committed write_s=%.3f writer_cpu_s=%.3f\n",
                    static_cast<long long>(step), end.wall - start.wall, end.cpu - start.cpu);
        std::fflush(stdout);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr,
                   "wireup-train[rank %d]: memory snapshot of step %lld failed, not committed "
                   "(the newest complete one stays): %s\n",
                   w_.rank, static_cast<long long>(step), e.what());
    }
    account();
  });
}

void MemoryCheckpointer::serialize(std::int64_t step, const std::string& data_position) {
  PartHeader h = layout_header();
  h.step = step;
  h.optimizer_steps = state_.optimizer_steps();
  h.data_position = data_position;
  const std::string head = to_text(h);
  part_.resize(head.size() + h.tensor_bytes());
  std::memcpy(part_.data(), head.data(), head.size());
  char* at = part_.data() + head.size();
  for (const UnitShard& u : state_.units)
    for (const at::Tensor& t : u.tensors) {
      if (t.numel() != u.numel || t.scalar_type() != at::kFloat)
        throw std::logic_error("memory snapshot: unit " + u.layout.name +
                               ": a slice that is not numel fp32 values");
      const at::Tensor host = t.is_cpu() ? t.contiguous() : t.to(at::kCPU).contiguous();
      const auto bytes = static_cast<std::size_t>(u.numel) * 4;
      std::memcpy(at, host.data_ptr<float>(), bytes);
      at += bytes;
    }
}

// Sends this rank's part to the next node and receives the previous node's part
// straight into `file`'s mapping, then commits it; the replica's bytes and checksum.
// The transfer happens whatever failed before (the peers wait for it): into a
// scratch buffer when the file cannot be had, with the reason in `problem`.
std::pair<std::size_t, std::string> MemoryCheckpointer::exchange_replica(const fs::path& file,
                                                                         std::string& problem) {
  at::Tensor size_out = at::full({1}, static_cast<std::int64_t>(part_.size()), at::kLong);
  at::Tensor size_in = at::zeros({1}, at::kLong);
  peer_->exchange(size_out, replica_to_, size_in, replica_from_);
  const auto n = static_cast<std::size_t>(size_in.item<std::int64_t>());
  std::optional<MappedPrivateFile> out;
  if (problem.empty()) problem = failure_of([&] { out.emplace(file, n); });
  std::vector<char> scratch(out ? 0 : n);
  const auto bytes = [](char* p, std::size_t size) {
    return at::from_blob(p, {static_cast<std::int64_t>(size)}, at::kByte);
  };
  peer_->exchange(bytes(part_.data(), part_.size()), replica_to_,
                  bytes(out ? out->data() : scratch.data(), n), replica_from_);
  std::string sum = "-";
  if (out) problem = failure_of([&] { sum = out->commit(); });
  return {n, sum};
}

// The node's first rank: retention, then snap-S.
void MemoryCheckpointer::prepare_snapshot_dir(std::int64_t step) {
  const fs::path node_dir = root_ / node_;
  open_private_dir(node_dir);
  std::vector<PresentSnapshot> present;
  for (const auto& e : fs::directory_iterator(node_dir))
    if (const auto s = snapshot_dir_step(e.path().filename().string()))
      present.push_back({*s, is_regular(e.path() / "complete")});
  std::sort(present.begin(), present.end(),
            [](const PresentSnapshot& a, const PresentSnapshot& b) { return a.step < b.step; });
  // The oldest retired snapshot becomes snap-S, its files overwritten in place; the rest go.
  const std::vector<std::int64_t> retired = snapshots_to_delete(present, step);
  const auto reuse =
      std::find_if(retired.begin(), retired.end(), [&](std::int64_t s) { return s != step; });
  for (const std::int64_t s : retired)
    if (reuse == retired.end() || s != *reuse) remove_snapshot_step(node_dir, s);
  if (reuse != retired.end() && !recycle_snapshot_dir(node_dir, *reuse, step, files_of_node()))
    remove_snapshot_step(node_dir, *reuse);
  open_private_dir(node_dir / snapshot_dir_name(step));
}

// What this node's snapshot directory holds: its ranks' parts and the replicas it keeps.
std::vector<std::string> MemoryCheckpointer::files_of_node() const {
  std::vector<std::string> names;
  for (int r = 0; r < w_.world; ++r) {
    if (rank_node_[r] == node_) names.push_back(part_file_name(r));
    if (replica_to_ >= 0 && rank_node_[(r + w_.local_world) % w_.world] == node_)
      names.push_back(replica_file_name(r));
  }
  return names;
}

// What every rank wrote, as the manifest records it; "" problems only.
SnapshotManifest MemoryCheckpointer::manifest_of(std::int64_t step,
                                                 const std::vector<std::string>& written) const {
  SnapshotManifest m;
  m.job_id = job_;
  m.uid = ::getuid();
  m.step = step;
  m.identity = identity_;
  m.rank_node = rank_node_;
  std::vector<std::vector<std::string>> f;
  for (const auto& t : written) f.push_back(split(t, ' '));
  for (int r = 0; r < w_.world; ++r)
    m.parts.push_back({r, rank_node_[r], std::stoull(f[r].at(0)), f[r].at(1)});
  if (replica_to_ < 0) return m;
  for (int r = 0; r < w_.world; ++r) {
    const int holder = (r + w_.local_world) % w_.world;
    if (f[holder].at(2) != f[r].at(0) || f[holder].at(3) != f[r].at(1))
      throw std::runtime_error("the replica of rank " + std::to_string(r) + " on rank " +
                               std::to_string(holder) + " is not the bytes rank " +
                               std::to_string(r) + " wrote");
    m.replicas.push_back({r, rank_node_[holder], m.parts[r].bytes, m.parts[r].checksum});
  }
  return m;
}

// Every rank takes every step, whatever failed on it (a full file system):
// the others would wait for it. A failure anywhere is every rank's, and
// nothing is committed.
void MemoryCheckpointer::write_and_commit(std::int64_t step) {
  const fs::path snap = root_ / node_ / snapshot_dir_name(step);
  std::string problem = leader_ ? failure_of([&] { prepare_snapshot_dir(step); }) : "";
  if (peer_) peer_->barrier();  // every node's directory is there
  std::string sum, replica_sum = "-";
  if (problem.empty())
    problem = failure_of([&] {
      sum = rewrite_private_file(snap / part_file_name(w_.rank), part_.data(), part_.size());
    });
  std::size_t replica_bytes = 0;
  if (replica_to_ >= 0)  // also after a failure here: the next node waits for this part
    std::tie(replica_bytes, replica_sum) =
        exchange_replica(snap / replica_file_name(replica_from_), problem);
  std::replace(problem.begin(), problem.end(), '\n', ' ');
  const auto written =
      gather_text(!problem.empty() ? "! " + problem
                                   : std::to_string(part_.size()) + " " + sum + " " +
                                         std::to_string(replica_bytes) + " " + replica_sum);
  for (int r = 0; r < w_.world; ++r)
    if (written[r].rfind("! ", 0) == 0)
      throw std::runtime_error("rank " + std::to_string(r) + " (node " + rank_node_[r] +
                               "): " + written[r].substr(2));
  const SnapshotManifest m = manifest_of(step, written);
  if (leader_) problem = failure_of([&] { commit_snapshot(snap, m); });
  if (peer_) peer_->barrier();  // committed everywhere before the next one deletes older ones
  if (!problem.empty()) throw std::runtime_error("committing on node " + node_ + ": " + problem);
}

std::vector<std::string> MemoryCheckpointer::gather_text(const std::string& mine) {
  if (!peer_) return {mine};
  const int n = peer_->size();
  at::Tensor len = at::full({1}, static_cast<std::int64_t>(mine.size()), at::kLong);
  at::Tensor lens = at::empty({n}, at::kLong);
  peer_->all_gather(len, lens);
  std::int64_t width = 0;
  for (int r = 0; r < n; ++r) width = std::max(width, lens[r].item<std::int64_t>());
  std::vector<std::string> out(static_cast<std::size_t>(n));
  if (width == 0) return out;
  at::Tensor buf = at::zeros({width}, at::kByte), all = at::empty({n * width}, at::kByte);
  std::memcpy(buf.data_ptr(), mine.data(), mine.size());
  peer_->all_gather(buf, all);
  const char* p = static_cast<const char*>(all.data_ptr());
  for (int r = 0; r < n; ++r)
    out[static_cast<std::size_t>(r)].assign(p + r * width,
                                            static_cast<std::size_t>(lens[r].item<std::int64_t>()));
  return out;
}

}  // namespace wireup::train
