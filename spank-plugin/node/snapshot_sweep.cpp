#include "snapshot_sweep.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <vector>

#include "wireup/memory_snapshot_owner.hpp"
#include "wireup/text.hpp"

namespace wireup::spank {
namespace {

// DIR/node/snap-S/part: the deepest thing wireup-train makes is 3 levels down.
constexpr int kMaxDepth = 4;

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

std::uint64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Reads the names in an open directory (without "." and ".."), each charged to the
// budget. "" when all were read; else why not ("" in `error` and a stopped budget:
// the budget ran out).
std::string read_names(int dir_fd, SweepBudget& budget, std::vector<std::string>& names) {
  const int dup_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return errno_text("read");
  DIR* d = ::fdopendir(dup_fd);
  if (d == nullptr) {
    const std::string why = errno_text("read");
    ::close(dup_fd);
    return why;
  }
  std::string why;
  for (;;) {
    errno = 0;
    const dirent* e = ::readdir(d);
    if (e == nullptr) {
      if (errno != 0) why = errno_text("read");
      break;
    }
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    const std::size_t len = std::strlen(e->d_name);
    if (!budget.take(len, now_ns())) {
      why = "not all read";
      break;
    }
    names.emplace_back(e->d_name, len);
  }
  ::closedir(d);
  return why;
}

class Sweeper {
 public:
  Sweeper(uid_t uid, dev_t root_dev, const SweepOptions& options, SweepResult& r)
      : uid_(uid),
        root_dev_(root_dev),
        options_(options),
        r_(r),
        budget_(options.limits, now_ns()) {}

  // The directory `st` (the job's, or one under it) entered: false when it was before,
  // or when no more can be kept track of.
  bool enter(const struct stat& st) {
    switch (visited_.insert(st.st_dev, st.st_ino)) {
      case VisitedDirs::Insert::Seen:
        ++r_.revisits;
        return false;
      case VisitedDirs::Insert::Full:
        budget_.stop_for_directories();
        return false;
      case VisitedDirs::Insert::New:
        break;
    }
    ++r_.dirs_entered;
    if (options_.on_enter) options_.on_enter(st.st_dev, st.st_ino);
    return true;
  }

  // Removes what `dir_fd` (the directory at `path`) holds; true when it is empty now.
  bool empty_dir(int dir_fd, const std::string& path, int depth) {
    std::vector<std::string> names;
    const std::string unread = read_names(dir_fd, budget_, names);
    // The owner marker last: until the tree is gone, it still says whose it is.
    std::stable_partition(names.begin(), names.end(), [&](const std::string& n) {
      return depth > 0 || n != kSnapshotOwnerFile;
    });
    bool all_gone = unread.empty();
    std::size_t i = 0;
    for (; i < names.size() && budget_.time_left(now_ns()); ++i) {
      const bool marker = depth == 0 && names[i] == kSnapshotOwnerFile;
      if (marker && !all_gone) continue;  // it stays with what stays
      all_gone = remove_entry(dir_fd, path + "/" + names[i], names[i], depth) && all_gone;
    }
    for (; i < names.size(); ++i) r_.left.add(path + "/" + names[i], "not reached in time");
    if (!unread.empty()) r_.left.add(path, unread);
    return all_gone && i == names.size();
  }

  void finish() {
    r_.entries = budget_.entries();
    r_.stopped = budget_.reason();
  }

 private:
  // ENOENT counts as removed: on emulated nodes that share one parent, the
  // epilogs of all the job's nodes sweep the same tree at once.
  bool remove_entry(int dir_fd, const std::string& path, const std::string& name, int depth) {
    struct stat st {};
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      return errno == ENOENT || keep(path, errno_text("stat"));
    if (st.st_dev != root_dev_) return keep(path, "on another file system (a mount), not entered");
    if (st.st_uid != uid_)
      return keep(path, "owned by uid " + std::to_string(st.st_uid) + ", not the job's user");
    if (S_ISDIR(st.st_mode)) return remove_dir(dir_fd, path, name, depth, st);
    if (::unlinkat(dir_fd, name.c_str(), 0) != 0)
      return errno == ENOENT || keep(path, errno_text("unlink"));
    ++r_.files;
    if (S_ISREG(st.st_mode)) r_.bytes += static_cast<std::uint64_t>(st.st_size);
    return true;
  }

  // A directory `fstatat` saw as `st`: entered only when the one opened is that one,
  // and it was not entered before (moved ahead of the walk).
  bool remove_dir(int dir_fd, const std::string& path, const std::string& name, int depth,
                  const struct stat& st) {
    if (depth + 1 > kMaxDepth) return keep(path, "deeper than a snapshot tree goes");
    const Fd child(::openat(dir_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!child) return errno == ENOENT || keep(path, errno_text("open"));
    struct stat opened {};
    if (::fstat(child.get(), &opened) != 0) return keep(path, errno_text("stat"));
    if (!same_inode(opened, st)) return keep(path, "replaced while it was opened, not entered");
    if (!enter(opened))
      return keep(path, budget_.stopped() == SweepStop::None
                            ? "walked already (moved during the sweep), not entered again"
                            : "not entered");
    if (!empty_dir(child.get(), path, depth + 1)) return false;
    if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) != 0)
      return errno == ENOENT || keep(path, errno_text("rmdir"));
    return true;
  }

  bool keep(const std::string& path, const std::string& why) {
    r_.left.add(path, why);
    return false;
  }

  uid_t uid_;
  dev_t root_dev_;
  const SweepOptions& options_;
  SweepResult& r_;
  SweepBudget budget_;
  VisitedDirs visited_;
};

// Why the owner marker, as fstat or fstatat saw it, is not read: "" when it may be.
std::string marker_refusal(const struct stat& st, uid_t uid) {
  if (S_ISLNK(st.st_mode)) return "the owner marker is a symlink, not followed";
  if (S_ISFIFO(st.st_mode)) return "the owner marker is a FIFO, not opened";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return "the owner marker is a device node, not opened";
  if (!S_ISREG(st.st_mode)) return "the owner marker is not a regular file, not opened";
  if (st.st_uid != uid)
    return "the owner marker is owned by uid " + std::to_string(st.st_uid) + ", not the job's user";
  if (st.st_nlink != 1)
    return "the owner marker has " + std::to_string(st.st_nlink) + " hard links, not read";
  if (static_cast<std::uint64_t>(st.st_size) > kSnapshotOwnerMaxBytes)
    return "the owner marker is " + std::to_string(st.st_size) + " bytes (at most " +
           std::to_string(kSnapshotOwnerMaxBytes) + "), not read";
  return "";
}

// The owner marker's text: its type, owner, links and size are checked before it is
// opened (fstatat, then an O_PATH descriptor), and it is opened through that
// descriptor, so what is read is the inode checked. nullopt and `why` when refused.
std::optional<std::string> read_marker(int dir_fd, uid_t uid, std::string& why) {
  const std::string name(kSnapshotOwnerFile);
  struct stat seen {};
  if (::fstatat(dir_fd, name.c_str(), &seen, AT_SYMLINK_NOFOLLOW) != 0) {
    why = errno == ENOENT ? "no owner marker" : errno_text("owner marker");
    return std::nullopt;
  }
  if (why = marker_refusal(seen, uid); !why.empty()) return std::nullopt;
  const Fd path_fd(::openat(dir_fd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!path_fd || ::fstat(path_fd.get(), &st) != 0) {
    why = errno_text("owner marker");
    return std::nullopt;
  }
  if (why = marker_refusal(st, uid); !why.empty()) return std::nullopt;
  if (!same_inode(st, seen)) {
    why = "the owner marker was replaced while it was checked";
    return std::nullopt;
  }
  char proc_path[64];
  std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", path_fd.get());
  const Fd fd(::open(proc_path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat opened {};
  if (!fd || ::fstat(fd.get(), &opened) != 0 || !same_inode(opened, st)) {
    why = fd ? "the owner marker was replaced while it was opened" : errno_text("owner marker");
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (::pread(fd.get(), text.data(), text.size(), 0) != st.st_size) {
    why = "the owner marker cannot be read";
    return std::nullopt;
  }
  return text;
}

// The owner marker's problem, or "" when it names `job` and `uid`.
std::string marker_problem(int dir_fd, const std::string& job, uid_t uid) {
  std::string why;
  const std::optional<std::string> text = read_marker(dir_fd, uid, why);
  if (!text) return why;
  const std::optional<SnapshotOwner> owner = parse_snapshot_owner(*text);
  if (!owner) return "not a wireup memory snapshot owner marker";
  if (owner->job != job) return "its owner marker names job " + shown_text(owner->job, 64);
  if (owner->uid != std::to_string(uid))
    return "its owner marker names uid " + shown_text(owner->uid, 64);
  return "";
}

// PARENT opened one component at a time, never through a symlink: -1 and errno
// (ELOOP or ENOTDIR for a symlink) when it cannot be.
int open_parent(const std::string& parent) {
  int fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  for (const std::string& part : split(parent, '/')) {
    if (fd < 0 || part.empty()) continue;
    const int next = ::openat(fd, part.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int saved = errno;
    ::close(fd);
    errno = saved;
    fd = next;
  }
  return fd;
}

// Why PARENT's owner and mode let another user swap what the sweep opens: "" when it
// is root's or sticky (like /dev/shm).
std::string parent_refusal(int parent_fd) {
  struct stat st {};
  if (::fstat(parent_fd, &st) != 0) return errno_text("stat");
  if (st.st_uid == 0 || (st.st_mode & S_ISVTX) != 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "owned by uid " + std::to_string(st.st_uid) + " and not sticky (mode " + mode +
         "), so never swept";
}

// The job's directory `name`, checked and opened: its descriptor, or -1 when the
// sweep stops here (with what it left in `r`, or nothing when it is simply gone).
int open_job_dir(int parent_fd, const std::string& name, const std::string& path, uid_t uid,
                 struct stat& st, SweepResult& r) {
  if (S_ISLNK(st.st_mode)) {
    r.left.add(path, "a symlink, never followed");
    return -1;
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != uid) {
    r.left.add(path, "not a directory of the job's user (uid " + std::to_string(uid) + ")");
    return -1;
  }
  const int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return -1;  // another node's epilog (a shared parent)
  struct stat opened {};
  if (fd < 0 || ::fstat(fd, &opened) != 0 || !same_inode(opened, st)) {
    if (fd >= 0) ::close(fd);
    r.left.add(path, "changed while it was being opened");
    return -1;
  }
  return fd;
}

}  // namespace

SweepResult sweep_job_snapshots(const std::string& parent, const std::string& job, uid_t uid,
                                const SweepOptions& options) {
  SweepResult r;
  const std::string name = snapshot_dir_name_for_job(job);
  const std::string path = parent + "/" + name;
  const Fd parent_fd(open_parent(parent));
  if (!parent_fd) {
    // No such parent on this node: nothing of ours there.
    if (errno == ENOENT) return r;
    r.found = true;
    r.left.add(parent, errno == ELOOP || errno == ENOTDIR
                           ? "a symlink or not a directory in its path, never followed"
                           : errno_text("open"));
    return r;
  }
  struct stat st {};
  if (::fstatat(parent_fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return r;
  r.found = true;
  if (const std::string why = parent_refusal(parent_fd.get()); !why.empty()) {
    r.left.add(parent, why);
    return r;
  }
  const Fd dir(open_job_dir(parent_fd.get(), name, path, uid, st, r));
  if (!dir) return r;
  if (const std::string why = marker_problem(dir.get(), job, uid); !why.empty()) {
    // A shared parent: another node's epilog emptied it first.
    struct stat now {};
    if (why == "no owner marker" && ::fstat(dir.get(), &now) == 0 && now.st_nlink == 0) return r;
    r.left.add(path, why);
    return r;
  }
  Sweeper sweeper(uid, st.st_dev, options, r);
  sweeper.enter(st);
  const bool empty = sweeper.empty_dir(dir.get(), path, 0);
  sweeper.finish();
  if (!empty) return r;
  if (::unlinkat(parent_fd.get(), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    r.left.add(path, errno_text("rmdir"));
    return r;
  }
  r.removed = true;
  return r;
}

std::string describe(const SweepResult& r, const std::string& parent, const std::string& job) {
  if (!r.found) return "";
  const std::string path = shown_text(parent + "/" + snapshot_dir_name_for_job(job));
  std::string line =
      r.removed ? "removed the memory snapshots " + path : "left the memory snapshots " + path;
  line += " of job " + shown_text(job, 64) + " (" + std::to_string(r.files) + " files, " +
          std::to_string(r.bytes) + " bytes removed";
  if (!r.stopped.empty()) line += "; stopped: " + r.stopped;
  line += ")";
  const std::vector<std::string>& shown = r.left.shown();
  for (std::size_t i = 0; i < shown.size(); ++i) line += (i == 0 ? ": " : "; ") + shown[i];
  if (r.left.count() > shown.size())
    line += "; and " + std::to_string(r.left.count() - shown.size()) + " more";
  return line;
}

}  // namespace wireup::spank
