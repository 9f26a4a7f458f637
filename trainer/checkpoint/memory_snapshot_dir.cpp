#include "checkpoint/memory_snapshot_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "wireup/crc32c.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/memory_snapshot_owner.hpp"
#include "wireup/text.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

const std::string kOwnerName(kSnapshotOwnerFile);

std::string octal_mode(unsigned mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777u);
  return buf;
}

// What is wrong with an open directory for a private use; "" when nothing.
std::string private_dir_problem(const struct stat& st) {
  if (!S_ISDIR(st.st_mode)) return "not a directory";
  if (st.st_uid != ::geteuid())
    return "owned by uid " + std::to_string(st.st_uid) + ", not you (" +
           std::to_string(::geteuid()) + ")";
  if ((st.st_mode & 0777u) != 0700u) return "mode " + octal_mode(st.st_mode) + ", expected 0700";
  return "";
}

// lstat; false when the path does not exist, InputError for other failures.
bool lstat_path(const fs::path& p, struct stat& st) {
  if (::lstat(p.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  io::throw_errno(p, "lstat");
}

// Opens a file for reading without following a symlink; an empty Fd with
// `why` set when it is missing, a symlink or not a regular file.
io::Fd open_nofollow(const fs::path& p, struct stat& st, std::string& why) {
  int fd;
  do {
    fd = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    why = errno == ENOENT ? "missing" : errno == ELOOP ? "a symlink" : std::strerror(errno);
    return {};
  }
  io::Fd f(fd);
  if (::fstat(f.get(), &st) != 0) io::throw_errno(p, "stat");
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return {};
  }
  if (st.st_uid != ::geteuid()) {
    why = "owned by uid " + std::to_string(st.st_uid) + ", not you";
    return {};
  }
  return f;
}

std::string owner_text(const std::string& job_id) {
  return wireup::snapshot_owner_text(job_id, ::geteuid());
}

// Checks root's owner marker against this job and user: what it says, nullopt when absent.
std::optional<SnapshotOwner> check_owner_marker(const fs::path& root, const std::string& job_id) {
  const fs::path marker = root / kOwnerName;
  std::string why;
  const std::optional<std::string> text = read_private_text(marker, kSnapshotOwnerMaxBytes, why);
  if (!text) {
    if (why == "missing") return std::nullopt;
    throw InputError(io::shown(marker) + ": " + why);
  }
  const std::optional<SnapshotOwner> owner = parse_snapshot_owner(*text);
  if (!owner) throw InputError(io::shown(marker) + ": not a wireup memory snapshot owner marker");
  const std::string& job = owner->job;
  const std::string& uid = owner->uid;
  if (job != job_id)
    throw InputError(io::shown(root) + " belongs to job " + job + ", this is job " + job_id +
                     "; memory snapshots of another job are never read or removed");
  if (uid != std::to_string(::geteuid()))
    throw InputError(io::shown(root) + " belongs to uid " + uid + ", not you (" +
                     std::to_string(::geteuid()) + ")");
  return owner;
}

void unlink_if_present(const fs::path& p) {
  if (::unlink(p.c_str()) != 0 && errno != ENOENT) io::throw_errno(p, "unlink");
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

fs::path memory_snapshot_root(const std::string& flag, const EnvLookup& env) {
  if (!flag.empty()) return fs::path(flag);
  const std::optional<std::string> job = env("SLURM_JOB_ID");
  if (!job || job->empty())
    throw InputError(
        "memory snapshots: no SLURM_JOB_ID (not in a Slurm job): name a directory with "
        "--memory_checkpoint_dir");
  if (!parse_uint(*job))
    throw InputError("memory snapshots: SLURM_JOB_ID " + wireup::quoted(*job) +
                     " is not a job id: name a directory with --memory_checkpoint_dir");
  return fs::path("/dev/shm") / snapshot_dir_name_for_job(*job);
}

bool is_safe_node_name(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  for (const char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
          c == '_' || c == '-'))
      return false;
  return true;
}

std::string node_name(const EnvLookup& env) {
  std::optional<std::string> name = env("SLURMD_NODENAME");
  if (!name || name->empty()) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0)
      throw InputError(std::string("memory snapshots: gethostname: ") + std::strerror(errno));
    name = host;
  }
  if (!is_safe_node_name(*name))
    throw InputError("memory snapshots: node name " + wireup::quoted(*name) +
                     " cannot name a directory (expected letters, digits, '.', '_', '-')");
  return *name;
}

void open_private_dir(const fs::path& path) {
  bool made = false;
  if (::mkdir(path.c_str(), 0700) == 0)
    made = true;
  else if (errno != EEXIST)
    io::throw_errno(path, "mkdir");
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    struct stat st {};
    if (lstat_path(path, st) && S_ISLNK(st.st_mode))
      throw InputError(io::shown(path) +
                       ": a symlink; memory snapshot directories are never "
                       "reached through one");
    if (errno == ENOTDIR) throw InputError(io::shown(path) + ": not a directory");
    io::throw_errno(path, "open");
  }
  const io::Fd dir(fd);
  // mkdir's mode went through the umask: set it exactly, on the descriptor.
  if (made && ::fchmod(dir.get(), 0700) != 0) io::throw_errno(path, "chmod");
  struct stat st {};
  if (::fstat(dir.get(), &st) != 0) io::throw_errno(path, "stat");
  const std::string problem = private_dir_problem(st);
  if (!problem.empty()) throw InputError(io::shown(path) + ": " + problem);
}

void claim_root(const fs::path& root, const std::string& job_id) {
  if (!parse_uint(job_id))
    throw InputError("memory snapshots: job id " + wireup::quoted(job_id) + " is not digits");
  open_private_dir(root);
  if (check_owner_marker(root, job_id)) return;
  const std::string text = owner_text(job_id);
  write_private_file(root / kOwnerName, text.data(), text.size());
}

void claim_default_root(const fs::path& root, const std::string& job_id) {
  try {
    claim_root(root, job_id);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + " (" + root.string() +
                     " is the default directory, a name anyone on this node can take before "
                     "the job starts: the admin's fix is spank_wireup's job prolog, which makes "
                     "it for the job's user before any task starts (docs/snapshot-epilog.md); "
                     "yours is --memory_checkpoint_dir naming a directory of your own)");
  }
}

bool check_root_owner(const fs::path& root, const std::string& job_id) {
  return check_owner_marker(root, job_id).has_value();
}

std::string write_private_file(const fs::path& path, const void* data, std::size_t bytes) {
  const fs::path tmp = path.string() + ".tmp";
  unlink_if_present(tmp);  // a write cut short; unlink never follows a symlink
  try {
    const io::Fd fd = io::open_file(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    if (::fchmod(fd.get(), 0600) != 0) io::throw_errno(tmp, "chmod");
    io::write_all(fd.get(), data, bytes, tmp);
    io::fsync_fd(fd.get(), tmp);
    io::rename_durably(tmp, path);
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
  return crc32c_quarters_hex(data, bytes);
}

MappedPrivateFile::MappedPrivateFile(const fs::path& path, std::size_t bytes)
    : path_(path), tmp_(path.string() + ".tmp"), bytes_(bytes) {
  unlink_if_present(tmp_);
  if (::rename(path_.c_str(), tmp_.c_str()) != 0 && errno != ENOENT)
    io::throw_errno(path_, "rename");
  try {
    io::Fd fd = io::open_file(tmp_, O_RDWR | O_CREAT | O_NOFOLLOW, 0600);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) io::throw_errno(tmp_, "stat");
    if (!S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
      throw InputError(io::shown(tmp_) + ": not a file of yours (uid " + std::to_string(st.st_uid) +
                       ")");
    if (::fchmod(fd.get(), 0600) != 0) io::throw_errno(tmp_, "chmod");
    if (::ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0) io::throw_errno(tmp_, "truncate");
    if (bytes > 0) {
      if (const int rc = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes)); rc != 0) {
        errno = rc;
        io::throw_errno(tmp_, "reserve " + std::to_string(bytes) + " bytes in");
      }
      map_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd.get(), 0);
      if (map_ == MAP_FAILED) {
        map_ = nullptr;
        io::throw_errno(tmp_, "mmap");
      }
    }
    fd_ = fd.release();
  } catch (...) {
    ::unlink(tmp_.c_str());
    throw;
  }
}

MappedPrivateFile::~MappedPrivateFile() {
  if (map_ != nullptr) ::munmap(map_, bytes_);
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

std::string MappedPrivateFile::commit() {
  const std::string sum = crc32c_quarters_hex(map_ != nullptr ? map_ : "", bytes_);
  if (map_ != nullptr && ::msync(map_, bytes_, MS_SYNC) != 0) io::throw_errno(tmp_, "msync");
  io::fsync_fd(fd_, tmp_);
  io::rename_durably(tmp_, path_);
  committed_ = true;
  return sum;
}

std::string rewrite_private_file(const fs::path& path, const void* data, std::size_t bytes) {
  MappedPrivateFile f(path, bytes);
  if (bytes > 0) std::memcpy(f.data(), data, bytes);
  return f.commit();
}

std::string checksum_private_file(const fs::path& path, std::uint64_t expect_bytes,
                                  std::string& why) {
  struct stat st {};
  const io::Fd fd = open_nofollow(path, st, why);
  if (!fd) return "";
  if (static_cast<std::uint64_t>(st.st_size) != expect_bytes) {
    why = std::to_string(st.st_size) + " bytes, expected " + std::to_string(expect_bytes);
    return "";
  }
  // Up to a MiB of each quarter at a time, a buffer per quarter (32 bytes at
  // least: quarter 3's rest).
  const std::size_t chunk = std::min<std::uint64_t>(
      std::max<std::uint64_t>(crc32c_quarter_bytes(expect_bytes), 32), 1U << 20);
  std::vector<char> buf(4 * chunk);
  return crc32c_quarters_hex(expect_bytes, chunk,
                             [&](int lane, std::uint64_t offset, std::size_t n) {
                               char* into = buf.data() + static_cast<std::size_t>(lane) * chunk;
                               io::pread_all(fd.get(), into, n, offset, path);
                               return static_cast<const char*>(into);
                             });
}

std::optional<std::string> read_private_text(const fs::path& path, std::uint64_t max_bytes,
                                             std::string& why) {
  struct stat st {};
  const io::Fd fd = open_nofollow(path, st, why);
  if (!fd) return std::nullopt;
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > max_bytes) {
    why = std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
          " expected of this file";
    return std::nullopt;
  }
  std::string text(size, '\0');
  io::pread_all(fd.get(), text.data(), size, 0, path);
  return text;
}

std::string snapshot_dir_name(std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "snap-%08lld", static_cast<long long>(step));
  return buf;
}

std::optional<std::int64_t> snapshot_dir_step(const std::string& name) {
  if (name.size() < 13 || name.size() > 24 || name.rfind("snap-", 0) != 0) return std::nullopt;
  const std::optional<std::uint64_t> step = parse_uint(name.substr(5), INT64_MAX);
  if (!step || snapshot_dir_name(static_cast<std::int64_t>(*step)) != name) return std::nullopt;
  return static_cast<std::int64_t>(*step);
}

std::string part_file_name(int rank) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank-%05d.bin", rank);
  return buf;
}

std::string replica_file_name(int rank) { return "replica-" + part_file_name(rank); }

bool is_snapshot_file_name(const std::string& name) {
  std::string base = name;
  if (base.size() > 4 && base.compare(base.size() - 4, 4, ".tmp") == 0)
    base.resize(base.size() - 4);
  if (base == "manifest" || base == "complete") return true;
  if (base.rfind("replica-", 0) == 0) base = base.substr(8);
  if (base.size() < 14 || base.rfind("rank-", 0) != 0 ||
      base.compare(base.size() - 4, 4, ".bin") != 0)
    return false;
  const std::optional<std::uint64_t> rank = parse_uint(base.substr(5, base.size() - 9), INT32_MAX);
  return rank && part_file_name(static_cast<int>(*rank)) == base;
}

std::string human_bytes(std::uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  else
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

std::string capacity_problem(const fs::path& dir, std::uint64_t bytes_per_snapshot,
                             std::uint64_t free_bytes, std::uint64_t reusable_bytes) {
  const std::uint64_t need =
      bytes_per_snapshot > UINT64_MAX / 2 ? UINT64_MAX : 2 * bytes_per_snapshot;
  const std::uint64_t have =
      free_bytes > UINT64_MAX - reusable_bytes ? UINT64_MAX : free_bytes + reusable_bytes;
  if (have >= need) return "";
  return "memory snapshots: " + io::shown(dir) + " has room for " + human_bytes(have) + " (" +
         std::to_string(have) + " bytes), but each snapshot of this node takes " +
         human_bytes(bytes_per_snapshot) + " (" + std::to_string(bytes_per_snapshot) +
         " bytes) and two must fit (the newest complete one and the one in progress): " +
         "name a larger file system with --memory_checkpoint_dir";
}

namespace {
// Bytes of the regular files under `dir`, symlinks not followed.
std::uint64_t bytes_under(const fs::path& dir) {
  std::uint64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::file_status st = it->symlink_status(ec);
    if (!ec && fs::is_regular_file(st)) total += it->file_size(ec);
    ec.clear();
  }
  return total;
}
}  // namespace

void check_capacity(const fs::path& dir, std::uint64_t bytes_per_snapshot) {
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) io::throw_errno(dir, "statvfs");
  const std::uint64_t free_bytes =
      static_cast<std::uint64_t>(vfs.f_bavail) * static_cast<std::uint64_t>(vfs.f_frsize);
  const std::string problem =
      capacity_problem(dir, bytes_per_snapshot, free_bytes, bytes_under(dir));
  if (!problem.empty()) throw InputError(problem);
}

namespace {
// Removes one snapshot directory's files of ours, then the directory; names
// what it leaves in `left`.
void remove_snapshot(const fs::path& snap, std::vector<std::string>& left) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(snap, ec)) {
    struct stat st {};
    const std::string name = e.path().filename().string();
    if (!lstat_path(e.path(), st)) continue;
    if (!is_snapshot_file_name(name) || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
      left.push_back(io::shown(e.path()) + " (not made by wireup)");
      continue;
    }
    unlink_if_present(e.path());
  }
  if (ec) io::throw_errno(snap, "list");
  if (::rmdir(snap.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY)
    io::throw_errno(snap, "rmdir");
}

// Removes `dir` if it is a private directory of ours; else names it in `left`.
bool removable_dir(const fs::path& dir, std::vector<std::string>& left) {
  struct stat st {};
  if (!lstat_path(dir, st)) return false;
  const std::string problem = S_ISLNK(st.st_mode) ? "a symlink" : private_dir_problem(st);
  if (problem.empty()) return true;
  left.push_back(io::shown(dir) + " (" + problem + ")");
  return false;
}
}  // namespace

bool recycle_snapshot_dir(const fs::path& node_dir, std::int64_t from, std::int64_t to,
                          const std::vector<std::string>& keep) {
  std::vector<std::string> left;
  const fs::path old = node_dir / snapshot_dir_name(from);
  if (!removable_dir(old, left)) return false;
  unlink_if_present(old / "complete");
  unlink_if_present(old / "manifest");
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(old, ec)) {
    const std::string name = e.path().filename().string();
    struct stat st {};
    if (std::find(keep.begin(), keep.end(), name) != keep.end() && lstat_path(e.path(), st) &&
        S_ISREG(st.st_mode) && st.st_uid == ::geteuid())
      continue;
    if (!is_snapshot_file_name(name)) return false;  // not ours: retention removes it, or names it
    unlink_if_present(e.path());
  }
  if (ec) io::throw_errno(old, "list");
  const fs::path snap = node_dir / snapshot_dir_name(to);
  return ::rename(old.c_str(), snap.c_str()) == 0;  // a leftover snap-`to` that stayed: no
}

std::vector<std::string> remove_snapshot_step(const fs::path& node_dir, std::int64_t step) {
  std::vector<std::string> left;
  const fs::path snap = node_dir / snapshot_dir_name(step);
  if (removable_dir(snap, left)) remove_snapshot(snap, left);
  return left;
}

std::vector<std::string> remove_snapshot_dir(const fs::path& root, const std::string& node,
                                             const std::string& job_id) {
  std::vector<std::string> left;
  if (!removable_dir(root, left)) return left;
  const std::optional<SnapshotOwner> owner = check_owner_marker(root, job_id);
  const fs::path node_dir = root / node;
  if (removable_dir(node_dir, left)) {
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(node_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (!snapshot_dir_step(name)) {
        left.push_back(io::shown(e.path()) + " (not made by wireup)");
        continue;
      }
      if (removable_dir(e.path(), left)) remove_snapshot(e.path(), left);
    }
    if (ec) io::throw_errno(node_dir, "list");
    if (::rmdir(node_dir.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY)
      io::throw_errno(node_dir, "rmdir");
  }
  // The job prolog's DIR stays, with its marker, for the job's epilog: removed
  // here, its name would be free for anyone to take before the job's next srun.
  if (owner && owner->maker == SnapshotDirMaker::prolog) return left;
  // Other nodes' directories (a shared DIR) keep the marker and DIR.
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
    if (e.path().filename() != kOwnerName) return left;
  unlink_if_present(root / kOwnerName);
  if (::rmdir(root.c_str()) != 0 && errno != ENOENT && errno != ENOTEMPTY)
    io::throw_errno(root, "rmdir");
  return left;
}

}  // namespace wireup::train
