#include "checkpoint.hpp"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <future>
#include <sstream>

#include "wireup/sha256.hpp"
#include "wireup/error.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

const char* const kKinds[] = {"param", "exp_avg", "exp_avg_sq"};

[[noreturn]] void io_fail(const fs::path& p, const std::string& what) {
  throw InputError(p.string() + ": " + what + ": " + std::strerror(errno));
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) io_fail(p, "open for fsync");
  if (::fsync(fd) != 0) {
    ::close(fd);
    io_fail(p, "fsync");
  }
  ::close(fd);
}

// Writes `text` to `path` durably: a temporary name, fsync, rename, fsync dir.
void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) io_fail(tmp, "write");
  }
  fsync_path(tmp, O_RDONLY);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) io_fail(path, "rename");
  fsync_path(path.parent_path(), O_RDONLY | O_DIRECTORY);
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string() + ": cannot read");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
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
  std::vector<at::Tensor> tensors;  // unit-major: param, exp_avg, exp_avg_sq
  std::vector<std::int64_t> offsets;  // global offset of each unit's slice
  CheckpointMeta meta;                // everything but files
  bool writer = false;
  int shard_rank = 0, shard_size = 1, world_rank = 0;
  std::chrono::steady_clock::time_point started;
  double stall_s = 0;  // how long training waited for this save
};

std::vector<fs::path> complete_checkpoints(const fs::path& dir) {
  std::vector<std::pair<std::string, fs::path>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto name = it->path().filename().string();
    if (name.rfind("step-", 0) == 0 && fs::exists(it->path() / "metadata.json"))
      found.emplace_back(name, it->path());
  }
  std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::vector<fs::path> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

Checkpointer::Checkpointer(fs::path dir, int keep, bool async, CommGroups groups,
                           std::vector<FlatUnit*> units, ShardedAdamW* opt)
    : dir_(std::move(dir)), keep_(keep), async_(async), groups_(std::move(groups)),
      units_(std::move(units)), opt_(opt) {}

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
    for (std::size_t i = 0; i < units_.size(); ++i) {
      // GPU state is copied to host buffers kept from save to save (fresh ones
      // would page-fault in while training waits); CPU state is written as is.
      auto host = [&](const at::Tensor& t) {
        if (t.is_cpu()) return t;
        const std::size_t k = snap->tensors.size();
        if (host_.size() <= k) host_.push_back(at::empty({t.numel()}, at::kFloat));
        host_[k].copy_(t);
        return host_[k];
      };
      snap->tensors.push_back(host(units_[i]->master()));
      snap->tensors.push_back(host(opt_->exp_avg()[i]));
      snap->tensors.push_back(host(opt_->exp_avg_sq()[i]));
      snap->offsets.push_back(units_[i]->shard_offset());
    }
  }
  CheckpointMeta& m = snap->meta;
  m.wireup_version = "0.1.0";
  m.step = info.step;
  m.seed = info.seed;
  m.model = info.model;
  m.preset = info.preset;
  m.sharding = info.sharding;
  m.world_size = groups_.world->size();
  m.shard_group_size = snap->shard_size;
  m.optimizer_steps = opt_->steps();
  const auto& c = opt_->config();
  m.beta1 = c.beta1, m.beta2 = c.beta2, m.eps = c.eps, m.weight_decay = c.weight_decay;
  m.data_position = info.data_position;
  for (auto* u : units_) {
    UnitMeta um;
    um.name = u->name();
    um.numel = u->numel();
    for (const auto& s : u->specs()) {
      um.param_names.push_back(s.name);
      um.param_shapes.push_back(s.shape);
    }
    m.units.push_back(um);
  }
  if (snap->world_rank == 0) {
    // A directory of this step left by an interrupted run holds files of
    // that attempt: start it afresh.
    const fs::path step_dir = dir_ / step_dir_name(info.step);
    std::error_code ec;
    fs::remove_all(step_dir, ec);
    fs::create_directories(step_dir);
  }
  groups_.world->barrier();  // the directory exists for everyone
  snap->stall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  stall_s_ += async_ ? snap->stall_s : 0.0;
  ++saves_;
  if (async_) {
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
  const fs::path step_dir = dir_ / step_dir_name(snap->info.step);
  if (snap->writer) {
    RankFile rf;
    rf.file = rank_name(snap->shard_rank, "bin");
    const fs::path bin = step_dir / rf.file;
    const fs::path tmp = bin.string() + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) io_fail(tmp, "create");
    std::uint64_t off = 0;
    for (std::size_t i = 0; i < snap->tensors.size(); ++i) {
      const at::Tensor& t = snap->tensors[i];
      const auto bytes = static_cast<std::size_t>(t.numel()) * sizeof(float);
      const char* p = static_cast<const char*>(t.data_ptr());
      // Hash on a second thread while this one writes: neither waits for the other.
      auto digest = std::async(std::launch::async, [p, bytes] {
        Sha256 h;
        h.update(p, bytes);
        return h.hex_digest();
      });
      for (std::size_t done = 0; done < bytes;) {
        const ssize_t n = ::write(fd, p + done, bytes - done);
        if (n < 0) {
          ::close(fd);
          io_fail(tmp, "write");
        }
        done += static_cast<std::size_t>(n);
      }
      rf.chunks.push_back({static_cast<int>(i / 3), kKinds[i % 3], snap->offsets[i / 3],
                           t.numel(), off, digest.get()});
      off += bytes;
    }
    rf.bytes = off;
    if (::fsync(fd) != 0) {
      ::close(fd);
      io_fail(tmp, "fsync");
    }
    ::close(fd);
    if (std::rename(tmp.c_str(), bin.c_str()) != 0) io_fail(bin, "rename");
    write_atomically(step_dir / rank_name(snap->shard_rank, "json"), to_json(rf));
  }
  if (snap->world_rank != 0) return;

  // The commit: wait until every shard rank's description is durable.
  CheckpointMeta meta = snap->meta;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  for (int r = 0; r < snap->shard_size; ++r) {
    const fs::path side = step_dir / rank_name(r, "json");
    while (!fs::exists(side)) {
      if (std::chrono::steady_clock::now() > deadline)
        throw InputError(side.string() + ": never appeared; checkpoint not committed");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    meta.files.push_back(rank_file_from_json(read_text(side), side.string()));
  }
  write_atomically(step_dir / "metadata.json", to_json(meta));
  std::uint64_t bytes = 0;
  for (const auto& f : meta.files) bytes += f.bytes;
  const double total =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - snap->started).count();
  std::printf("[checkpoint] step=%lld saved=%s bytes=%llu save_s=%.3f async=%d\n",
              static_cast<long long>(meta.step), step_dir.c_str(),
              static_cast<unsigned long long>(bytes), total, async_ ? 1 : 0);
  std::fflush(stdout);

  // Keep the newest `keep_` complete ones; drop older and abandoned directories.
  if (keep_ > 0) {
    const auto complete = complete_checkpoints(dir_);
    if (complete.size() > static_cast<std::size_t>(keep_)) {
      const std::string oldest_kept = complete[static_cast<std::size_t>(keep_) - 1].filename();
      std::error_code ec;
      for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        const auto name = it->path().filename().string();
        if (name.rfind("step-", 0) == 0 && name < oldest_kept) fs::remove_all(it->path(), ec);
      }
    }
  }
}

void Checkpointer::load_from(const fs::path& step_dir, const CheckpointMeta& meta) {
  if (meta.units.size() != units_.size())
    throw InputError(step_dir.string() + ": has " + std::to_string(meta.units.size()) +
                     " units, this model " + std::to_string(units_.size()));
  std::vector<int> fds(meta.files.size(), -1);
  std::vector<std::vector<char>> verified(meta.files.size());  // chunk checked already
  auto cleanup = [&] {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  };
  try {
    std::vector<float> buf;
    for (std::size_t u = 0; u < units_.size(); ++u) {
      FlatUnit& unit = *units_[u];
      if (meta.units[u].numel != unit.numel())
        throw InputError(step_dir.string() + ": unit " + unit.name() + " has " +
                         std::to_string(meta.units[u].numel) + " parameters, this model " +
                         std::to_string(unit.numel()));
      at::Tensor dests[3] = {unit.master(), opt_->exp_avg()[u], opt_->exp_avg_sq()[u]};
      for (int k = 0; k < 3; ++k) {
        at::Tensor dest = at::zeros({unit.shard_numel()}, at::kFloat);  // host staging
        float* out = dest.data_ptr<float>();
        for (const auto& piece :
             plan_reads(meta, static_cast<int>(u), kKinds[k], unit.shard_offset(), unit.shard_numel())) {
          const RankFile& rf = meta.files[piece.file];
          const ChunkRef& c = rf.chunks[piece.chunk];
          const fs::path bin = step_dir / rf.file;
          if (fds[piece.file] < 0) {
            fds[piece.file] = ::open(bin.c_str(), O_RDONLY | O_CLOEXEC);
            if (fds[piece.file] < 0) io_fail(bin, "open");
            struct stat st {};
            if (::fstat(fds[piece.file], &st) != 0 || static_cast<std::uint64_t>(st.st_size) != rf.bytes)
              throw InputError(bin.string() + ": " + std::to_string(st.st_size) + " bytes, expected " +
                               std::to_string(rf.bytes) + " (truncated or replaced)");
            verified[piece.file].assign(rf.chunks.size(), 0);
          }
          // Whole chunks are read and checked: a checksum covers nothing less.
          buf.resize(static_cast<std::size_t>(c.numel));
          const auto bytes = buf.size() * sizeof(float);
          const ssize_t n = ::pread(fds[piece.file], buf.data(), bytes, static_cast<off_t>(c.file_offset));
          if (n != static_cast<ssize_t>(bytes)) io_fail(bin, "short read");
          if (!verified[piece.file][piece.chunk]) {
            Sha256 h;
            h.update(buf.data(), bytes);
            if (h.hex_digest() != c.sha256)
              throw InputError(bin.string() + ": checksum mismatch in " + meta.units[u].name +
                               " " + c.kind + " (corrupted)");
            verified[piece.file][piece.chunk] = 1;
          }
          std::memcpy(out + piece.dest, buf.data() + piece.chunk_skip,
                      static_cast<std::size_t>(piece.count) * sizeof(float));
        }
        dests[k].copy_(dest);
      }
    }
  } catch (...) {
    cleanup();
    throw;
  }
  cleanup();
}

std::optional<CheckpointMeta> Checkpointer::load(const std::string& spec, const ModelConfig& expect) {
  const bool automatic = spec == "auto" || spec == "latest";
  std::vector<fs::path> candidates =
      automatic ? complete_checkpoints(dir_) : std::vector<fs::path>{fs::path(spec)};
  for (const auto& step_dir : candidates) {
    std::string error;
    CheckpointMeta meta;
    try {
      meta = checkpoint_meta_from_json(read_text(step_dir / "metadata.json"),
                                       (step_dir / "metadata.json").string());
      const auto& m = meta.model;
      if (m.hidden != expect.hidden || m.layers != expect.layers || m.heads != expect.heads ||
          m.kv_heads != expect.kv_heads || m.intermediate != expect.intermediate ||
          m.vocab != expect.vocab)
        throw InputError(step_dir.string() + ": saved from a different model shape");
      load_from(step_dir, meta);
    } catch (const std::exception& e) {
      error = e.what();
    }
    // Every rank must take the same checkpoint: agree that all loaded it.
    at::Tensor bad = scalar_tensor(error.empty() ? 0.0 : 1.0, units_.front()->master().device());
    groups_.world->all_reduce_sum(bad);
    if (bad.item<double>() == 0) {
      opt_->set_steps(meta.optimizer_steps);
      for (auto* u : units_) u->zero_grad();
      return meta;
    }
    if (!automatic) {
      throw InputError(error.empty() ? step_dir.string() + ": another rank could not load it"
                                     : error);
    }
    if (groups_.world->rank() == 0 || !error.empty())
      std::fprintf(stderr, "wireup-train: WARNING: skipping checkpoint %s: %s\n",
                   step_dir.c_str(), error.empty() ? "another rank could not load it" : error.c_str());
  }
  return std::nullopt;
}

}  // namespace wireup::train
