#include "snapshot_sweep.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "wireup/memory_snapshot_owner.hpp"

namespace wireup::spank {
namespace {

// DIR/node/snap-S/part: the deepest thing wireup-train makes is 3 levels down.
constexpr int kMaxDepth = 4;
// Entries read from one directory; a snapshot directory holds a few dozen.
constexpr std::size_t kMaxEntries = 1u << 16;

// A descriptor closed on scope exit. Not wireup_file_io's io::Fd: linking that library
// (std::filesystem) into the plugin adds 680 KB that srun and every slurmstepd load.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// The names in an open directory, without "." and "..", at most kMaxEntries.
std::vector<std::string> entry_names(int dir_fd, bool& truncated) {
  std::vector<std::string> names;
  const int dup_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return names;
  DIR* d = ::fdopendir(dup_fd);
  if (d == nullptr) {
    ::close(dup_fd);
    return names;
  }
  while (const dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (names.size() == kMaxEntries) {
      truncated = true;
      break;
    }
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return names;
}

class Sweeper {
 public:
  Sweeper(uid_t uid, SweepResult& r) : uid_(uid), r_(r) {}

  // Removes what `dir_fd` (the directory at `path`) holds; true when it is empty now.
  bool empty_dir(int dir_fd, const std::string& path, int depth) {
    bool truncated = false;
    bool all_gone = true;
    std::vector<std::string> names = entry_names(dir_fd, truncated);
    // The owner marker last: until the tree is gone, it still says whose it is.
    std::stable_partition(names.begin(), names.end(), [&](const std::string& n) {
      return depth > 0 || n != kSnapshotOwnerFile;
    });
    for (const std::string& name : names) {
      const bool marker = depth == 0 && name == kSnapshotOwnerFile;
      if (marker && (!all_gone || truncated)) return false;  // it stays with what stays
      all_gone = remove_entry(dir_fd, path + "/" + name, name, depth) && all_gone;
    }
    if (truncated)
      r_.left.push_back(path + ": more than " + std::to_string(kMaxEntries) +
                        " entries; the rest stays");
    return all_gone && !truncated;
  }

 private:
  // ENOENT counts as removed: on emulated nodes that share one parent, the
  // epilogs of all the job's nodes sweep the same tree at once.
  bool remove_entry(int dir_fd, const std::string& path, const std::string& name, int depth) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return errno == ENOENT || keep(path, errno_text("stat"));
    if (st.st_uid != uid_)
      return keep(path, "owned by uid " + std::to_string(st.st_uid) + ", not the job's user");
    if (S_ISDIR(st.st_mode)) {
      if (depth + 1 > kMaxDepth) return keep(path, "deeper than a snapshot tree goes");
      const Fd child(
          ::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!child) return errno == ENOENT || keep(path, errno_text("open"));
      if (!empty_dir(child.get(), path, depth + 1)) return false;
      if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0)
        return errno == ENOENT || keep(path, errno_text("rmdir"));
      return true;
    }
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0)
      return errno == ENOENT || keep(path, errno_text("unlink"));
    ++r_.files;
    if (S_ISREG(st.st_mode)) r_.bytes += static_cast<std::uint64_t>(st.st_size);
    return true;
  }

  bool keep(const std::string& path, const std::string& why) {
    r_.left.push_back(path + ": " + why);
    return false;
  }

  uid_t uid_;
  SweepResult& r_;
};

// The owner marker's problem, or "" when it names `job` and `uid`.
std::string marker_problem(int dir_fd, const std::string& job, uid_t uid) {
  const std::string name(kSnapshotOwnerFile);
  const Fd fd(::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd) return errno == ENOENT ? "no owner marker" : errno_text("owner marker");
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return errno_text("owner marker");
  if (!S_ISREG(st.st_mode) || st.st_uid != uid ||
      static_cast<std::uint64_t>(st.st_size) > kSnapshotOwnerMaxBytes)
    return "the owner marker is not a small file of the job's user";
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  const ssize_t n = ::pread(fd.get(), text.data(), text.size(), 0);
  if (n != st.st_size) return "the owner marker cannot be read";
  const std::optional<SnapshotOwner> owner = parse_snapshot_owner(text);
  if (!owner) return "not a wireup memory snapshot owner marker";
  if (owner->job != job) return "its owner marker names job " + owner->job;
  if (owner->uid != std::to_string(uid)) return "its owner marker names uid " + owner->uid;
  return "";
}

}  // namespace

SweepResult sweep_job_snapshots(const std::string& parent, const std::string& job, uid_t uid) {
  SweepResult r;
  const std::string name = snapshot_dir_name_for_job(job);
  const std::string path = parent + "/" + name;
  const Fd parent_fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent_fd) return r;  // no such parent on this node: nothing of ours there
  struct stat st {};
  if (::fstatat(parent_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return r;
  r.found = true;
  if (S_ISLNK(st.st_mode)) {
    r.left.push_back(path + ": a symlink, never followed");
    return r;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid) {
    r.left.push_back(path + ": not a directory of the job's user (uid " + std::to_string(uid) +
                     ")");
    return r;
  }
  const Fd dir(
      ::openat(parent_fd.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir && errno == ENOENT) return r;  // another node's epilog (a shared parent)
  struct stat opened {};
  if (!dir || ::fstat(dir.get(), &opened) != 0 || opened.st_ino != st.st_ino ||
      opened.st_dev != st.st_dev) {
    r.left.push_back(path + ": changed while it was being opened");
    return r;
  }
  if (const std::string why = marker_problem(dir.get(), job, uid); !why.empty()) {
    // A shared parent: another node's epilog emptied it first.
    if (why == "no owner marker" && ::fstat(dir.get(), &opened) == 0 && opened.st_nlink == 0)
      return r;
    r.left.push_back(path + ": " + why);
    return r;
  }
  Sweeper sweeper(uid, r);
  if (!sweeper.empty_dir(dir.get(), path, 0)) return r;
  if (::unlinkat(parent_fd.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    r.left.push_back(path + ": " + errno_text("rmdir"));
    return r;
  }
  r.removed = true;
  return r;
}

std::string describe(const SweepResult& r, const std::string& parent, const std::string& job) {
  if (!r.found) return "";
  const std::string path = parent + "/" + snapshot_dir_name_for_job(job);
  std::string line =
      r.removed ? "removed the memory snapshots " + path : "left the memory snapshots " + path;
  line += " of job " + job + " (" + std::to_string(r.files) + " files, " + std::to_string(r.bytes) +
          " bytes removed)";
  const std::size_t shown = std::min<std::size_t>(r.left.size(), 4);
  for (std::size_t i = 0; i < shown; ++i) line += (i == 0 ? ": " : "; ") + r.left[i];
  if (r.left.size() > shown) line += "; and " + std::to_string(r.left.size() - shown) + " more";
  return line;
}

}  // namespace wireup::spank
