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

#include "snapshot_fs.hpp"
#include "wireup/memory_snapshot_owner.hpp"
#include "wireup/snapshot_claim.hpp"
#include "wireup/text.hpp"

namespace wireup::spank {
namespace {

// DIR/node/snap-S/part: the deepest thing wireup-train makes is 3 levels down.
constexpr int kMaxDepth = 4;

std::uint64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
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

  // What the job prolog moved aside into a work directory (`dir_fd`): removed as the
  // tree of its owner `uid` would be. True when it is gone.
  bool remove_moved(int dir_fd, const std::string& path, const std::string& name, uid_t uid,
                    dev_t dev) {
    uid_ = uid;
    root_dev_ = dev;
    return remove_entry(dir_fd, path, name, 0);
  }

  // The names in `dir_fd`, charged to the budget: "" when all were read, else why not.
  std::string read(int dir_fd, std::vector<std::string>& names) {
    return read_names(dir_fd, budget_, names);
  }
  bool time_left() { return budget_.time_left(now_ns()); }

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
  const int fd = open_seen_dir(parent_fd, name, st);
  if (fd < 0 && errno == ENOENT) return -1;  // another node's epilog (a shared parent)
  if (fd < 0) r.left.add(path, "changed while it was being opened");
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
    r.left.add(parent, why + ", so never swept");
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

namespace {

// " (N files, B bytes removed[; stopped: WHY])[: the first left; ...][; and K more]".
std::string counts_and_left(const SweepResult& r) {
  std::string text =
      " (" + std::to_string(r.files) + " files, " + std::to_string(r.bytes) + " bytes removed";
  if (!r.stopped.empty()) text += "; stopped: " + r.stopped;
  text += ")";
  const std::vector<std::string>& shown = r.left.shown();
  for (std::size_t i = 0; i < shown.size(); ++i) text += (i == 0 ? ": " : "; ") + shown[i];
  if (r.left.count() > shown.size())
    text += "; and " + std::to_string(r.left.count() - shown.size()) + " more";
  return text;
}

// One work directory of the job's prolog: what it holds, then itself. Only a directory
// of root's with mode 0700 (as the prolog makes it) is entered; each entry in it is
// removed with what its own owner owns in it; root's only when root is the job's user.
bool sweep_work_dir(int parent_fd, const std::string& parent, const std::string& name,
                    uid_t job_uid, Sweeper& sweeper, SweepResult& r) {
  const std::string path = parent + "/" + name;
  struct stat st {};
  if (::fstatat(parent_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 07777) != 0700) {
    r.left.add(path, "not a work directory of the job prolog (root's, 0700), left");
    return false;
  }
  const Fd dir(open_seen_dir(parent_fd, name, st));
  if (!dir) {
    if (errno != ENOENT) r.left.add(path, "changed while it was opened");
    return errno == ENOENT;
  }
  std::vector<std::string> names;
  const std::string unread = sweeper.read(dir.get(), names);
  bool all_gone = unread.empty();
  if (!unread.empty()) r.left.add(path, unread);
  for (const std::string& n : names) {
    struct stat e {};
    const std::string at = path + "/" + n;
    if (!sweeper.time_left()) {
      r.left.add(at, "not reached in time");
      all_gone = false;
    } else if (::fstatat(dir.get(), n.c_str(), &e, AT_SYMLINK_NOFOLLOW) != 0) {
      all_gone = all_gone && errno == ENOENT;
    } else if (e.st_uid == 0 && job_uid != 0) {
      r.left.add(at, "owned by root, not the job's user, never removed");
      all_gone = false;
    } else {
      all_gone = sweeper.remove_moved(dir.get(), at, n, e.st_uid, st.st_dev) && all_gone;
    }
  }
  if (!all_gone) return false;
  if (::unlinkat(parent_fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) return true;
  r.left.add(path, errno_text("rmdir"));
  return false;
}

}  // namespace

SweepResult sweep_moved_aside(const std::string& parent, const std::string& job, uid_t uid,
                              const SweepOptions& options) {
  SweepResult r;
  const Fd parent_fd(open_parent(parent));
  // A parent refused or missing is the job directory's sweep's to report.
  if (!parent_fd || !parent_refusal(parent_fd.get()).empty()) return r;
  Sweeper sweeper(0, 0, options, r);
  std::vector<std::string> names;
  const std::string unread = sweeper.read(parent_fd.get(), names);
  bool all_gone = true;
  for (const std::string& n : names) {
    if (!is_prolog_work_dir_name(n, job)) continue;
    r.found = true;
    all_gone = sweep_work_dir(parent_fd.get(), parent, n, uid, sweeper, r) && all_gone;
  }
  if (!unread.empty() && r.found) r.left.add(parent, unread);
  sweeper.finish();
  r.removed = r.found && all_gone && unread.empty();
  return r;
}

std::string describe_moved_aside(const SweepResult& r, const std::string& parent,
                                 const std::string& job) {
  if (!r.found) return "";
  std::string line = (r.removed ? "removed what the job prolog moved aside in "
                                : "left some of what the job prolog moved aside in ") +
                     shown_text(parent) + " for job " + shown_text(job, 64);
  return line + counts_and_left(r);
}

std::string describe(const SweepResult& r, const std::string& parent, const std::string& job) {
  if (!r.found) return "";
  const std::string path = shown_text(parent + "/" + snapshot_dir_name_for_job(job));
  std::string line =
      r.removed ? "removed the memory snapshots " + path : "left the memory snapshots " + path;
  line += " of job " + shown_text(job, 64);
  return line + counts_and_left(r);
}

}  // namespace wireup::spank
