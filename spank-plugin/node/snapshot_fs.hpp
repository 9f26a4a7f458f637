#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <string>

// What the job prolog and epilog share to act as root on a directory users can write
// to (/dev/shm): a descriptor closed on scope exit, a parent opened one component at
// a time with O_NOFOLLOW, the rule that such a parent is root's or sticky, and the
// owner marker read only after its type, owner, links and size are checked. Every
// later step is openat/fstatat/renameat relative to a descriptor opened this way.
namespace wireup::spank {

// A descriptor closed on scope exit. Not wireup_file_io's io::Fd: linking that library
// (std::filesystem) into the plugin adds 680 KB that srun and every slurmstepd load.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

// "WHAT: strerror(errno)".
std::string errno_text(const char* what);

bool same_inode(const struct stat& a, const struct stat& b);

// PARENT opened one component at a time, never through a symlink: -1 and errno
// (ELOOP or ENOTDIR for a symlink) when it cannot be.
int open_parent(const std::string& parent);

// Why PARENT's owner and mode let another user swap what is opened in it ("owned by
// uid U and not sticky (mode M)"): "" when it is root's or sticky (like /dev/shm).
std::string parent_refusal(int parent_fd);

// The owner marker in `dir_fd`: "" when it names `job` and `uid`, else why not
// ("no owner marker" when there is none). Its type, owner, links and size are checked
// before it is opened (fstatat, then an O_PATH descriptor), and it is opened through
// that descriptor (/proc/self/fd/N), so what is read is the inode checked.
std::string marker_problem(int dir_fd, const std::string& job, uid_t uid);

// A directory `name` under `parent_fd`, opened O_NOFOLLOW: its descriptor when it is
// the inode `seen` (fstatat's), else -1.
int open_seen_dir(int parent_fd, const std::string& name, const struct stat& seen);

}  // namespace wireup::spank
