#include "snapshot_prolog.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <ctime>

#include "snapshot_fs.hpp"
#include "wireup/memory_snapshot_owner.hpp"
#include "wireup/snapshot_claim.hpp"
#include "wireup/sweep_budget.hpp"

namespace wireup::spank {
namespace {

// Looks at the name at most this many times: a name taken again after each move
// (another prolog of the job on a shared parent, or a user racing it) ends the loop.
constexpr int kAttempts = 4;

std::uint64_t random64() {
  std::uint64_t v = 0;
  if (::getrandom(&v, sizeof v, 0) == static_cast<ssize_t>(sizeof v)) return v;
  timespec ts{};  // no entropy yet (early boot): still unique per try, EEXIST retries
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_nsec) ^ (static_cast<std::uint64_t>(::getpid()) << 32);
}

// A directory `name` made under `dir_fd` by this process (root) with exactly `mode`,
// opened: -1 and errno when it cannot be (EEXIST when the name is taken, EPERM when
// what is there by then is not this process's: a root-owned parent anyone may write to).
int make_dir(int dir_fd, const std::string& name, mode_t mode) {
  if (::mkdirat(dir_fd, name.c_str(), mode) != 0) return -1;
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return -1;
  if (st.st_uid != ::geteuid()) {
    errno = EPERM;
    return -1;
  }
  const int fd = open_seen_dir(dir_fd, name, st);
  if (fd >= 0 && ::fchmod(fd, mode) != 0) {  // mkdir's mode went through the umask
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return -1;
  }
  return fd;
}

bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

class Prolog {
 public:
  Prolog(int parent_fd, const std::string& parent, const std::string& job, uid_t uid, gid_t gid,
         PrologResult& r)
      : parent_fd_(parent_fd),
        job_(job),
        name_(snapshot_dir_name_for_job(job)),
        path_(parent + "/" + name_),
        parent_(parent),
        uid_(uid),
        gid_(gid),
        r_(r) {}

  void run() {
    if (!make_work_dir()) return;
    const Fd work(work_fd_);
    if (!stage()) {
      ::unlinkat(parent_fd_, work_name_.c_str(), AT_REMOVEDIR);
      return;
    }
    for (int i = 0; i < kAttempts && !r_.created && !r_.kept && r_.error.empty(); ++i) look();
    if (!r_.created && !r_.kept && r_.error.empty())
      r_.error =
          shown_text(path_) + ": taken again after each of " + std::to_string(kAttempts) + " moves";
    if (!r_.created) discard_staged();
    // Empty unless something was moved aside: then the job's epilog removes it.
    ::unlinkat(parent_fd_, work_name_.c_str(), AT_REMOVEDIR);
  }

 private:
  // The work directory: root's, 0700, under a name nobody can predict.
  bool make_work_dir() {
    for (int i = 0; i < kAttempts; ++i) {
      work_name_ = prolog_work_dir_name(job_, random64());
      work_fd_ = make_dir(parent_fd_, work_name_, 0700);
      if (work_fd_ >= 0) return true;
      if (errno != EEXIST) break;
    }
    r_.error = shown_text(parent_ + "/" + work_name_) + ": " + errno_text("mkdir");
    return false;
  }

  // WORK/new: the job's directory as wireup-train's claim_root leaves it (0700, the
  // owner marker 0600, which also says the prolog made it), made by root where nobody else can
  // reach, then given to the user.
  bool stage() {
    const std::string where = shown_text(parent_ + "/" + work_name_ + "/new");
    const std::string name(kPrologNewEntry);
    const Fd dir(make_dir(work_fd_, name, 0700));
    if (!dir) return fail(where + ": " + errno_text("mkdir"));
    const std::string marker(kSnapshotOwnerFile);
    const Fd m(::openat(dir.get(), marker.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!m) return fail(where + "/owner: " + errno_text("create"));
    if (!write_all(m.get(), snapshot_owner_text(job_, uid_, SnapshotDirMaker::prolog)) ||
        ::fchmod(m.get(), 0600) != 0 || ::fchown(m.get(), uid_, gid_) != 0)
      return fail(where + "/owner: " + errno_text("write"));
    if (::fchown(dir.get(), uid_, gid_) != 0) return fail(where + ": " + errno_text("chown"));
    return true;
  }

  // One look at PARENT/wireup-JOB: the staged directory renamed into place where the
  // name is free, an exact one kept, anything else moved aside (the caller looks again).
  void look() {
    FoundEntry e;
    struct stat st {};
    if (::fstatat(parent_fd_, name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) return void(fail(shown_text(path_) + ": " + errno_text("stat")));
      const std::string staged(kPrologNewEntry);
      if (::renameat2(work_fd_, staged.c_str(), parent_fd_, name_.c_str(), RENAME_NOREPLACE) == 0)
        r_.created = true;
      else if (errno != EEXIST)
        fail(shown_text(path_) + ": " + errno_text("rename"));
      return;  // EEXIST: taken meanwhile, look again
    }
    e.kind = S_ISLNK(st.st_mode)   ? FoundEntry::Kind::Symlink
             : S_ISDIR(st.st_mode) ? FoundEntry::Kind::Directory
                                   : FoundEntry::Kind::Other;
    e.uid = st.st_uid;
    e.mode = st.st_mode & 07777;
    if (e.kind == FoundEntry::Kind::Directory && e.uid == uid_ && e.mode == 0700) {
      const Fd dir(open_seen_dir(parent_fd_, name_, st));
      e.marker_problem =
          dir ? marker_problem(dir.get(), job_, uid_) : "changed while it was opened";
    }
    const std::string why = squat_reason(e, uid_);
    if (why.empty()) {
      r_.kept = true;
      return;
    }
    move_aside(why);
  }

  // Whatever holds the name now goes into the work directory: renameat2 moves the name,
  // never follows it, and changes neither its owner nor what it holds.
  void move_aside(const std::string& why) {
    const std::string to = moved_entry_name(moved_++);
    if (::renameat2(parent_fd_, name_.c_str(), work_fd_, to.c_str(), RENAME_NOREPLACE) == 0)
      r_.moved.push_back("moved aside what held the name (" + why + ") to " +
                         shown_text(parent_ + "/" + work_name_ + "/" + to));
    else if (errno != ENOENT)  // ENOENT: gone meanwhile, look again
      fail(shown_text(path_) + ": " + why + "; " + errno_text("rename"));
  }

  // The staged directory, unused: nobody but root could reach it in the work directory.
  void discard_staged() {
    const std::string staged(kPrologNewEntry);
    struct stat st {};
    if (::fstatat(work_fd_, staged.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
    if (const Fd dir(open_seen_dir(work_fd_, staged, st)); dir) {
      const std::string marker(kSnapshotOwnerFile);
      ::unlinkat(dir.get(), marker.c_str(), 0);
    }
    ::unlinkat(work_fd_, staged.c_str(), AT_REMOVEDIR);
  }

  bool fail(const std::string& why) {
    if (r_.error.empty()) r_.error = why;
    return false;
  }

  int parent_fd_;
  int work_fd_ = -1;
  std::string job_, name_, path_, parent_, work_name_;
  uid_t uid_;
  gid_t gid_;
  int moved_ = 0;
  PrologResult& r_;
};

}  // namespace

PrologResult prepare_job_snapshot_dir(const std::string& parent, const std::string& job, uid_t uid,
                                      gid_t gid) {
  PrologResult r;
  const Fd parent_fd(open_parent(parent));
  if (!parent_fd) {
    if (errno != ENOENT)  // no such parent on this node: nothing to make
      r.error = shown_text(parent) + ": " +
                (errno == ELOOP || errno == ENOTDIR
                     ? std::string("a symlink or not a directory in its path, never followed")
                     : errno_text("open"));
    return r;
  }
  if (const std::string why = parent_refusal(parent_fd.get()); !why.empty()) {
    r.error = shown_text(parent) + ": " + why + ", so nothing is made there";
    return r;
  }
  Prolog(parent_fd.get(), parent, job, uid, gid, r).run();
  return r;
}

std::string describe(const PrologResult& r, const std::string& parent, const std::string& job) {
  if (r.moved.empty() && r.error.empty()) return "";
  const std::string path = shown_text(parent + "/" + snapshot_dir_name_for_job(job));
  std::string line = "memory snapshot directory " + path + " of job " + shown_text(job, 64);
  line += r.created ? ": made for the job's user"
          : r.kept  ? ": kept (already the job's)"
                    : ": not made";
  for (const std::string& m : r.moved) line += "; " + m;
  if (!r.error.empty()) line += "; " + r.error;
  return line;
}

}  // namespace wireup::spank
