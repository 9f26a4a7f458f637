#include "checkpoint/checkpointer.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "checkpoint/checkpoint_files.hpp"
#include "comm/collective_deadline.hpp"
#include "profile/step_trace.hpp"
#include "watchdog/stall_watch.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/version.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

std::string text_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string rank_name(int shard_rank, const char* ext) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.%s", shard_rank, ext);
  return buf;
}

}  // namespace

// The tensors of one save, copied so training can go on while they are written.
struct Checkpointer::Snapshot {
  CheckpointInfo info;
  std::vector<at::Tensor> tensors;    // unit-major, each unit's in tensor_names order
  std::vector<std::int64_t> offsets;  // global offset of each unit's slice
  CheckpointMeta meta;                // everything but files
  bool writer = false;
  int shard_rank = 0, shard_size = 1, world_rank = 0;
  std::chrono::steady_clock::time_point started;
  double stall_s = 0;  // how long training waited for this save
};

Checkpointer::Checkpointer(CheckpointPolicy policy, CommGroups groups, TrainingState state)
    : policy_(std::move(policy)), groups_(std::move(groups)), state_(std::move(state)) {}

Checkpointer::~Checkpointer() {
  try {
    wait();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup-train: checkpoint: %s\n", e.what());
  }
}

void Checkpointer::wait() {
  if (writer_.joinable()) writer_.join();
}

void Checkpointer::save(const CheckpointInfo& info) {
  if (state_.weights_only)
    throw std::logic_error("Checkpointer::save: a weights-only state loads, never saves");
  const TraceSpan span("checkpoint_save");  // in a --profile_steps window
  // Its collectives may wait on slow storage: --comm_init_timeout for them
  // (the vote of every step before it is a training collective).
  const CollectiveTimeoutScope storage(io_timeout());
  const auto t0 = std::chrono::steady_clock::now();
  wait();  // at most one save in flight
  auto snap = std::make_shared<Snapshot>();
  snap->started = t0;
  snap->info = info;
  snap->writer = groups_.replicate->rank() == 0;  // one copy of each shard
  snap->shard_rank = groups_.shard->rank();
  snap->shard_size = groups_.shard->size();
  snap->world_rank = groups_.world->rank();
  if (snap->writer) {
    for (const UnitShard& u : state_.units) {
      // GPU state is copied to host buffers kept from save to save (fresh ones
      // would page-fault in while training waits); CPU state is written as is.
      auto host = [&](const at::Tensor& t) {
        if (t.is_cpu()) return t;
        const std::size_t k = snap->tensors.size();
        if (host_.size() <= k) host_.push_back(at::empty({t.numel()}, at::kFloat));
        host_[k].copy_(t);
        return host_[k];
      };
      for (const at::Tensor& t : u.tensors) snap->tensors.push_back(host(t));
      snap->offsets.push_back(u.offset);
    }
  }
  CheckpointMeta& m = snap->meta;
  m.wireup_version = kVersion;
  m.step = info.step;
  m.seed = info.seed;
  m.model = info.model;
  m.preset = info.preset;
  m.sharding = info.sharding;
  m.world_size = groups_.world->size();
  m.shard_group_size = snap->shard_size;
  m.optimizer_steps = state_.optimizer_steps();
  m.beta1 = state_.beta1, m.beta2 = state_.beta2, m.eps = state_.eps;
  m.weight_decay = state_.weight_decay;
  m.data_position = info.data_position;
  m.chat_template = info.chat_template;
  m.lora = info.lora;
  m.dpo = info.dpo;
  m.unit_tensors = state_.tensor_names;
  for (const UnitShard& u : state_.units) m.units.push_back(u.layout);
  if (snap->world_rank == 0) {
    // A directory of this step left by an interrupted run holds files of
    // that attempt: start it afresh.
    const fs::path step_dir = policy_.dir / step_dir_name(info.step);
    std::error_code ec;
    fs::remove_all(step_dir, ec);
    fs::create_directories(step_dir);
  }
  groups_.world->barrier();  // the directory exists for everyone
  snap->stall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stall_s_ += policy_.async ? snap->stall_s : 0.0;
  ++saves_;
  if (policy_.async) {
    writer_ = std::thread([this, snap] {
      try {
        write(snap);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "wireup-train: checkpoint step %lld failed: %s\n",
                     static_cast<long long>(snap->info.step), e.what());
      }
    });
  } else {
    write(snap);
    stall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
}

void Checkpointer::before_update() {
  if (!writer_.joinable()) return;
  const auto t0 = std::chrono::steady_clock::now();
  wait();
  stall_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Checkpointer::write(const std::shared_ptr<Snapshot>& snap) {
  const fs::path step_dir = policy_.dir / step_dir_name(snap->info.step);
  try {
    write_files(snap, step_dir);
  } catch (...) {
    // The writers removed their .tmp files; an emptied step directory goes
    // too (fs::remove leaves one that still holds other ranks' files).
    std::error_code ec;
    fs::remove(step_dir, ec);
    throw;
  }
}

namespace {
// What a save's stuck file is, for the stall line (watchdog/stall_watch.hpp).
StallWatch::Describe writing(const fs::path& file) {
  return [f = io::shown(file)] {
    return "writing " + f + " (--comm_init_timeout); the checkpoints saved before it are untouched";
  };
}

// Rank 0's wait for the shard ranks' descriptions: the ones not there yet,
// looked up when the deadline passes (the file system only: nothing the
// waiting thread changes). Shard rank r's copy is written by world rank r
// (replica 0 holds world ranks 0..shard_size-1), so the line names ranks the
// way a collective's stall does: "not arrived: rank 1 (rank-00001.json)".
StallWatch::Describe awaiting_side_files(const fs::path& step_dir, int shard_size) {
  return [step_dir, shard_size] {
    std::string missing;
    for (int r = 0; r < shard_size; ++r) {
      if (fs::exists(step_dir / rank_name(r, "json"))) continue;
      missing += (missing.empty() ? "rank " : ", rank ") + std::to_string(r) + " (" +
                 rank_name(r, "json") + ")";
    }
    return "committing " + io::shown(step_dir) + "; not arrived: " + missing +
           " (each shard rank writes its own; --comm_init_timeout); the checkpoints saved " +
           "before it are untouched";
  };
}
}  // namespace

// Each file of a save (writing, fsync and rename) has --comm_init_timeout.
std::chrono::milliseconds Checkpointer::io_timeout() const {
  return std::chrono::milliseconds(static_cast<std::int64_t>(policy_.io_timeout_s * 1000));
}

// The commit's wait for a file whose writer died (killed, out of memory) ends
// at once when its group can tell (ranks on this node, over shared memory),
// not at --comm_init_timeout: the launcher's stop of the survivors would
// otherwise wait out its grace period.
void Checkpointer::fail_if_a_rank_exited(const fs::path& step_dir, const fs::path& awaited) const {
  std::string who = groups_.world->exited_member();
  if (who.empty() && groups_.shard) who = groups_.shard->exited_member();
  if (who.empty()) return;
  throw std::runtime_error("checkpoint: " + who + " exited while rank " +
                           std::to_string(groups_.world->rank()) + " waited for " +
                           io::shown(awaited.filename()) + " committing " + io::shown(step_dir) +
                           "; the checkpoints saved before it are untouched");
}

void Checkpointer::write_files(const std::shared_ptr<Snapshot>& snap, const fs::path& step_dir) {
  if (snap->writer) {
    RankFile rf;
    rf.file = rank_name(snap->shard_rank, "bin");
    std::optional<StallDeadline> deadline;
    deadline.emplace("checkpoint", io_timeout(), writing(step_dir / (rf.file + ".tmp")));
    ChunkWriter out(step_dir / rf.file);
    const std::vector<std::string>& names = snap->meta.unit_tensors;
    for (std::size_t i = 0; i < snap->tensors.size(); ++i) {
      const at::Tensor& t = snap->tensors[i];
      const std::size_t unit = i / names.size();
      auto [offset, sha] = out.append(t.data_ptr<float>(), t.numel());
      rf.chunks.push_back({static_cast<int>(unit), names[i % names.size()], snap->offsets[unit],
                           t.numel(), offset, std::move(sha)});
    }
    rf.bytes = out.commit();
    const fs::path side = step_dir / rank_name(snap->shard_rank, "json");
    deadline.emplace("checkpoint", io_timeout(), writing(side.string() + ".tmp"));
    io::write_atomically(side, to_json(rf));
  }
  if (snap->world_rank != 0) return;

  // The commit: wait until every shard rank's description is durable. A rank
  // whose file never comes (its write stuck, the rank stopped) ends this one
  // after --comm_init_timeout too, naming the files still missing.
  CheckpointMeta meta = snap->meta;
  {
    const StallDeadline deadline("checkpoint", io_timeout(),
                                 awaiting_side_files(step_dir, snap->shard_size));
    for (int r = 0; r < snap->shard_size; ++r) {
      const fs::path side = step_dir / rank_name(r, "json");
      while (!fs::exists(side)) {
        fail_if_a_rank_exited(step_dir, side);
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      meta.files.push_back(rank_file_from_json(read_text(side), io::shown(side)));
    }
  }
  {
    const StallDeadline deadline("checkpoint", io_timeout(),
                                 writing(step_dir / "metadata.json.tmp"));
    io::write_atomically(step_dir / "metadata.json", to_json(meta));
  }
  verified_.insert(step_dir.filename().string());  // its checksums are of the bytes written
  std::uint64_t bytes = 0;
  for (const auto& f : meta.files) bytes += f.bytes;
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - snap->started).count();
  std::printf("[checkpoint] step=%lld saved=%s bytes=%llu save_s=%.3f async=%d\n",
              static_cast<long long>(meta.step), io::shown(step_dir).c_str(),
              static_cast<unsigned long long>(bytes), total, policy_.async ? 1 : 0);
  std::fflush(stdout);
  if (policy_.keep > 0) prune();
}

// Keeps the newest `keep` checkpoints that verify. Newest first, each one not
// yet known to load is read and checked in full; one that fails is moved
// aside (step-N.corrupt), so it is neither counted nor ever the reason a good
// one goes. Step directories older than the oldest kept (older checkpoints,
// saves cut short) are deleted; moved-aside ones stay for inspection.
void Checkpointer::prune() {
  std::string oldest_kept;
  std::size_t kept = 0;
  for (const auto& step_dir : complete_checkpoints(policy_.dir)) {
    const std::string name = step_dir.filename().string();
    if (!verified_.count(name)) {
      const std::string fault = verify_checkpoint(step_dir);
      if (!fault.empty()) {
        const fs::path aside = move_aside(step_dir);
        std::fprintf(stderr,
                     "wireup-train: WARNING: checkpoint %s fails verification (%s): moved aside "
                     "to %s, not counted in --keep_checkpoints\n",
                     io::shown(step_dir).c_str(), fault.c_str(), io::shown(aside).c_str());
        continue;
      }
      verified_.insert(name);
    }
    oldest_kept = name;
    if (++kept == static_cast<std::size_t>(policy_.keep)) break;
  }
  if (kept < static_cast<std::size_t>(policy_.keep)) return;
  std::error_code ec;
  std::vector<fs::path> old;
  for (fs::directory_iterator it(policy_.dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (is_step_dir_name(name) && name < oldest_kept) old.push_back(it->path());
  }
  for (const auto& p : old) {
    fs::remove_all(p, ec);
    verified_.erase(p.filename().string());
  }
}

std::optional<std::string> Checkpointer::end_of_step(std::int64_t step, bool stop_signal,
                                                     const std::function<CheckpointInfo()>& info) {
  // Every rank must agree to stop: a signal may reach them at different steps.
  const bool planned = policy_.stop_after_step > 0 && step == policy_.stop_after_step;
  at::Tensor votes =
      scalar_tensor(stop_signal || planned ? 1.0 : 0.0, state_.units.front().tensors[0].device());
  groups_.world->all_reduce_sum(votes);
  const bool stop = votes.item<double>() > 0;
  const bool saving = !policy_.dir.empty() && (stop || step == policy_.max_steps ||
                                               (policy_.freq > 0 && step % policy_.freq == 0));
  if (saving) save(info());
  if (!stop) return std::nullopt;
  wait();
  const std::string why = planned ? "--stop_after_step" : "signal received";
  if (saving)
    return "[stop] " + why + ": checkpoint of step " + std::to_string(step) + " saved, exiting";
  return "[stop] " + why + ": stopped after step " + std::to_string(step) +
         " without saving (no --checkpoint_dir), exiting";
}

void Checkpointer::load_from(const fs::path& step_dir, const CheckpointMeta& meta) {
  if (meta.units.size() != state_.units.size())
    throw InputError(io::shown(step_dir) + ": has " + std::to_string(meta.units.size()) +
                     " units, this model " + std::to_string(state_.units.size()));
  for (const std::string& name : state_.tensor_names)
    if (std::find(meta.unit_tensors.begin(), meta.unit_tensors.end(), name) ==
        meta.unit_tensors.end())
      throw InputError(io::shown(step_dir) + ": its units hold " + text_list(meta.unit_tensors) +
                       "; this run's state also has " + name);
  ChunkReader reader(step_dir, meta);
  for (std::size_t u = 0; u < state_.units.size(); ++u) {
    UnitShard& unit = state_.units[u];
    if (meta.units[u].numel != unit.layout.numel)
      throw InputError(io::shown(step_dir) + ": unit " + unit.layout.name + " has " +
                       std::to_string(meta.units[u].numel) + " parameters, this model " +
                       std::to_string(unit.layout.numel));
    for (std::size_t k = 0; k < state_.tensor_names.size(); ++k) {
      at::Tensor& dest = unit.tensors[k];
      // Straight into a host slice; a device one through the host. Padding
      // past the unit's parameters reads as zero.
      const bool host = dest.is_cpu() && dest.is_contiguous() && dest.scalar_type() == at::kFloat &&
                        dest.numel() == unit.numel;
      at::Tensor into = host ? dest.zero_() : at::zeros({unit.numel}, at::kFloat);
      reader.read(static_cast<int>(u), state_.tensor_names[k], unit.offset, unit.numel,
                  into.data_ptr<float>());
      if (!host) dest.copy_(into);
    }
  }
}

std::optional<CheckpointMeta> Checkpointer::load(const std::string& spec,
                                                 const RunIdentity& expect) {
  const bool automatic = spec == "auto" || spec == "latest";
  std::vector<fs::path> candidates =
      automatic ? complete_checkpoints(policy_.dir) : std::vector<fs::path>{fs::path(spec)};
  std::string faults;
  bool touched = false;  // a failed load may have written part of the state
  for (const auto& step_dir : candidates) {
    std::string error;
    CheckpointMeta meta;
    try {
      meta = checkpoint_meta_from_json(read_text(step_dir / "metadata.json"),
                                       io::shown(step_dir / "metadata.json"));
      if (const std::string why = identity_mismatch(identity_of(meta), expect); !why.empty())
        throw InputError(io::shown(step_dir) + ": " + why);
      touched = true;
      load_from(step_dir, meta);
    } catch (const std::exception& e) {
      error = e.what();
    }
    // Every rank must take the same checkpoint: agree that all loaded it.
    at::Tensor bad =
        scalar_tensor(error.empty() ? 0.0 : 1.0, state_.units.front().tensors[0].device());
    groups_.world->all_reduce_sum(bad);
    if (bad.item<double>() == 0) {
      state_.restored(meta.optimizer_steps);
      verified_.insert(step_dir.filename().string());
      return meta;
    }
    const bool mine = !error.empty();
    if (!mine && groups_.world->rank() == 0) error = verify_checkpoint(step_dir);  // say why
    if (error.empty()) error = io::shown(step_dir) + ": another rank could not load it";
    if (!automatic) throw InputError(error);
    if (groups_.world->rank() == 0 || mine)
      std::fprintf(stderr, "wireup-train: WARNING: skipping checkpoint %s: %s\n",
                   io::shown(step_dir).c_str(), error.c_str());
    faults += "\n  " + io::shown(step_dir.filename()) + ": " + error;
  }
  if (candidates.empty()) return std::nullopt;
  const std::string what = "--resume_from_checkpoint " + spec + ": none of the " +
                           std::to_string(candidates.size()) + " checkpoints in " +
                           io::shown(policy_.dir) + " loads:" + faults;
  if (!policy_.start_fresh_if_unloadable)
    throw InputError(what +
                     "\nrepair or remove them, or pass --start_fresh_if_unloadable to "
                     "train from step 1 (the next save then moves the broken ones aside)");
  if (groups_.world->rank() == 0)
    std::fprintf(stderr,
                 "wireup-train: WARNING: %s\n--start_fresh_if_unloadable: training from "
                 "step 1\n",
                 what.c_str());
  if (touched) {
    if (!state_.start_over)
      throw std::logic_error("Checkpointer: a failed load wrote into a state without start_over");
    state_.start_over();
  }
  return std::nullopt;
}

}  // namespace wireup::train
