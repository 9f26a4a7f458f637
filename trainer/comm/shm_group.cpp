#include "comm/shm_group.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <new>

#include "comm/collective_deadline.hpp"

namespace wireup::train {

namespace {

constexpr std::uint64_t kMagic = 0x7075657269775348ull;  // "HSwireup", version 1
constexpr int kMaxRanks = 256;
constexpr std::size_t kHeaderBytes = 64 * (2 + kMaxRanks);

std::string errno_text() { return std::strerror(errno); }

// The PID namespace: peers' liveness is checked by pid, so all must share it.
std::uint64_t pid_namespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Whether a process has ended: gone, or a zombie its parent has not reaped yet.
bool exited(std::int32_t pid) {
  if (::kill(pid, 0) != 0) return errno == ESRCH;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* f = std::fopen(path, "r");
  if (f == nullptr) return false;
  char line[512] = {};
  const bool got = std::fgets(line, sizeof line, f) != nullptr;
  std::fclose(f);
  const char* close = got ? std::strrchr(line, ')') : nullptr;  // "pid (comm) S ..."
  return close != nullptr && (close[2] == 'Z' || close[2] == 'X');
}

// Phases wrap at 2^32: compare by the signed distance.
bool reached(std::uint32_t seen, std::uint32_t phase) {
  return static_cast<std::int32_t>(seen - phase) >= 0;
}

}  // namespace

struct alignas(64) RankState {
  std::atomic<std::uint32_t> phase;
  std::atomic<std::uint32_t> sleepers;  // ranks asleep on `phase`: wake them
  std::atomic<std::int32_t> pid;
};

struct ShmGroup::Header {
  alignas(64) std::atomic<std::uint64_t> magic;
  std::uint32_t size;
  std::uint64_t slot_bytes;
  std::uint64_t pidns;
  alignas(64) RankState ranks[kMaxRanks];
};

ShmGroup::ShmGroup(void* base, std::size_t bytes, int rank, int size, std::size_t slot_bytes,
                   std::string name)
    : base_(base),
      bytes_(bytes),
      header_(static_cast<Header*>(base)),
      data_(static_cast<unsigned char*>(base) + kHeaderBytes),
      rank_(rank),
      size_(size),
      slot_bytes_(slot_bytes),
      name_(std::move(name)) {
  header_->ranks[rank_].pid.store(static_cast<std::int32_t>(::getpid()));
}

ShmGroup::~ShmGroup() { ::munmap(base_, bytes_); }

std::unique_ptr<ShmGroup> ShmGroup::create(const std::string& name, int size,
                                           std::size_t slot_bytes) {
  static_assert(sizeof(Header) <= kHeaderBytes);
  if (size < 1 || size > kMaxRanks)
    throw ShmUnavailable("shared-memory group of " + std::to_string(size) + " ranks (1 to " +
                         std::to_string(kMaxRanks) + ")");
  slot_bytes = std::max<std::size_t>(64, slot_bytes / 64 * 64);
  const std::size_t bytes = kHeaderBytes + static_cast<std::size_t>(size) * 2 * slot_bytes;
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) throw ShmUnavailable("shm_open " + name + ": " + errno_text());
  // Reserve the pages now: a full /dev/shm is an error here, not a SIGBUS later.
  const int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  void* base =
      rc == 0 ? ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  const int err = rc != 0 ? rc : errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    ::shm_unlink(name.c_str());
    throw ShmUnavailable("cannot reserve " + std::to_string(bytes >> 20) + " MiB in /dev/shm for " +
                         name + ": " + std::strerror(err));
  }
  auto* h = new (base) Header();  // the file is zeroed; this starts the atomics' lifetimes
  h->size = static_cast<std::uint32_t>(size);
  h->slot_bytes = slot_bytes;
  h->pidns = pid_namespace();
  h->magic.store(kMagic, std::memory_order_release);
  return std::unique_ptr<ShmGroup>(new ShmGroup(base, bytes, 0, size, slot_bytes, name));
}

std::unique_ptr<ShmGroup> ShmGroup::attach(const std::string& name, int rank, int size) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) throw ShmUnavailable("shm_open " + name + ": " + errno_text());
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kHeaderBytes)) {
    ::close(fd);
    throw ShmUnavailable("segment " + name + " is too small");
  }
  const auto bytes = static_cast<std::size_t>(st.st_size);
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) throw ShmUnavailable("mmap " + name + ": " + errno_text());
  auto* h = static_cast<Header*>(base);
  std::string why;
  if (h->magic.load(std::memory_order_acquire) != kMagic)
    why = "not a wireup segment of this version";
  else if (h->size != static_cast<std::uint32_t>(size) || rank < 1 || rank >= size)
    why = "made for " + std::to_string(h->size) + " ranks, attached as rank " +
          std::to_string(rank) + " of " + std::to_string(size);
  else if (kHeaderBytes + static_cast<std::size_t>(size) * 2 * h->slot_bytes != bytes)
    why = "its size does not match its header";
  else if (h->pidns != pid_namespace())
    why = "the ranks are in different PID namespaces";
  if (!why.empty()) {
    ::munmap(base, bytes);
    throw ShmUnavailable("segment " + name + ": " + why);
  }
  // the name stays rank 0's to remove
  return std::unique_ptr<ShmGroup>(new ShmGroup(base, bytes, rank, size, h->slot_bytes, {}));
}

void ShmGroup::unlink() {
  if (!name_.empty()) ::shm_unlink(name_.c_str());
  name_.clear();
}

unsigned char* ShmGroup::half(int rank, std::uint32_t phase) const {
  return data_ + (static_cast<std::size_t>(rank) * 2 + (phase & 1u)) * slot_bytes_;
}

std::uint32_t ShmGroup::publish() {
  RankState& me = header_->ranks[rank_];
  me.phase.store(++phase_, std::memory_order_seq_cst);
  if (me.sleepers.load(std::memory_order_seq_cst) != 0)
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&me.phase), FUTEX_WAKE, INT32_MAX,
              nullptr, nullptr, 0);
  return phase_;
}

void ShmGroup::wait_rank(int k, std::uint32_t phase,
                         std::chrono::steady_clock::time_point deadline) {
  RankState& r = header_->ranks[k];
  for (int spin = 0; spin < 2000; ++spin) {
    if (reached(r.phase.load(std::memory_order_acquire), phase)) return;
    cpu_relax();
  }
  for (;;) {
    const std::uint32_t seen = r.phase.load(std::memory_order_acquire);
    if (reached(seen, phase)) return;
    r.sleepers.fetch_add(1, std::memory_order_seq_cst);
    const timespec tick{0, 20'000'000};  // 20 ms: then check the peer is alive
    ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&r.phase), FUTEX_WAIT, seen, &tick,
              nullptr, 0);
    r.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(r.phase.load(std::memory_order_acquire), phase)) return;
    const std::int32_t pid = r.pid.load();
    if (pid > 0 && exited(pid))
      throw std::runtime_error("shared-memory collective: rank " + std::to_string(k) + " (pid " +
                               std::to_string(pid) + ") exited while rank " +
                               std::to_string(rank_) + " waited for it");
    if (std::chrono::steady_clock::now() > deadline) stalled(k, phase);
  }
}

void ShmGroup::stalled(int k, std::uint32_t phase) const {
  std::vector<int> missing;  // every rank not at `phase` yet, not only the first one seen
  for (int j = 0; j < size_; ++j)
    if (j != rank_ && !reached(header_->ranks[j].phase.load(), phase)) missing.push_back(j);
  const auto t = timeout();
  throw PeerStalled(
      std::move(missing), std::chrono::duration<double>(t).count(),
      "shared-memory collective: rank " + std::to_string(rank_) + " waited " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(t).count()) +
          " s for rank " + std::to_string(k) +
          (header_->ranks[k].pid.load() > 0 ? "" : ", which never attached"));
}

std::chrono::milliseconds ShmGroup::timeout() const {
  return timeout_.count() > 0 ? timeout_ : collective_timeout();
}

void ShmGroup::wait_all(std::uint32_t phase) {
  const auto deadline = std::chrono::steady_clock::now() + timeout();
  for (int k = 0; k < size_; ++k)
    if (k != rank_) wait_rank(k, phase, deadline);
}

void ShmGroup::barrier() { wait_all(publish()); }

std::string ShmGroup::exited_member() const {
  for (int k = 0; k < size_; ++k) {
    const std::int32_t pid = header_->ranks[k].pid.load();
    if (k != rank_ && pid > 0 && exited(pid))
      return "rank " + std::to_string(k) + " (pid " + std::to_string(pid) + ")";
  }
  return {};
}

void ShmGroup::all_gather(const void* shard, void* full, std::size_t bytes) {
  const auto* in = static_cast<const unsigned char*>(shard);
  auto* out = static_cast<unsigned char*>(full);
  std::size_t off = 0;
  do {  // at least one phase, so that empty shards still keep the ranks in step
    const std::size_t len = std::min(slot_bytes_, bytes - off);
    std::memcpy(half(rank_, phase_ + 1), in + off, len);
    const std::uint32_t p = publish();
    wait_all(p);
    for (int k = 0; k < size_; ++k) {
      const unsigned char* src = k == rank_ ? in + off : half(k, p);
      std::memcpy(out + static_cast<std::size_t>(k) * bytes + off, src, len);
    }
    off += len;
  } while (off < bytes);
}

template <typename T>
void ShmGroup::reduce_scatter(const T* full, T* shard, std::size_t n) {
  const std::size_t per_chunk = std::max<std::size_t>(1, slot_bytes_ / sizeof(T) / size_);
  std::size_t off = 0;
  do {
    const std::size_t len = std::min(per_chunk, n - off);
    T* mine = reinterpret_cast<T*>(half(rank_, phase_ + 1));
    for (int d = 0; d < size_; ++d)  // every destination's piece, side by side
      std::memcpy(mine + d * len, full + d * n + off, len * sizeof(T));
    const std::uint32_t p = publish();
    wait_all(p);
    T* out = shard + off;
    const std::size_t at = static_cast<std::size_t>(rank_) * len;
    std::memcpy(out, reinterpret_cast<const T*>(half(0, p)) + at, len * sizeof(T));
    for (int k = 1; k < size_; ++k) {
      const T* src = reinterpret_cast<const T*>(half(k, p)) + at;
      for (std::size_t i = 0; i < len; ++i) out[i] += src[i];
    }
    off += len;
  } while (off < n);
}

template <typename T>
void ShmGroup::all_reduce(T* data, std::size_t n) {
  const std::size_t per_chunk = std::max<std::size_t>(1, slot_bytes_ / sizeof(T));
  std::size_t off = 0;
  do {
    const std::size_t len = std::min(per_chunk, n - off);
    std::memcpy(half(rank_, phase_ + 1), data + off, len * sizeof(T));
    const std::uint32_t p = publish();
    wait_all(p);
    T* out = data + off;
    std::memcpy(out, half(0, p), len * sizeof(T));
    for (int k = 1; k < size_; ++k) {
      const T* src = reinterpret_cast<const T*>(half(k, p));
      for (std::size_t i = 0; i < len; ++i) out[i] += src[i];
    }
    off += len;
  } while (off < n);
}

void ShmGroup::reduce_scatter_sum(const float* full, float* shard, std::size_t n) {
  reduce_scatter(full, shard, n);
}
void ShmGroup::reduce_scatter_sum(const double* full, double* shard, std::size_t n) {
  reduce_scatter(full, shard, n);
}
void ShmGroup::all_reduce_sum(float* data, std::size_t n) { all_reduce(data, n); }
void ShmGroup::all_reduce_sum(double* data, std::size_t n) { all_reduce(data, n); }

void ShmGroup::broadcast(void* data, std::size_t bytes, int root) {
  if (root < 0 || root >= size_)
    throw std::invalid_argument("broadcast from rank " + std::to_string(root) + " of " +
                                std::to_string(size_));
  auto* buf = static_cast<unsigned char*>(data);
  std::size_t off = 0;
  do {
    const std::size_t len = std::min(slot_bytes_, bytes - off);
    if (rank_ == root) std::memcpy(half(rank_, phase_ + 1), buf + off, len);
    const std::uint32_t p = publish();
    wait_all(p);
    if (rank_ != root) std::memcpy(buf + off, half(root, p), len);
    off += len;
  } while (off < bytes);
}

}  // namespace wireup::train
