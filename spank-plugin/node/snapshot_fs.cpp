#include "snapshot_fs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>

#include "wireup/memory_snapshot_owner.hpp"
#include "wireup/sweep_budget.hpp"
#include "wireup/text.hpp"

namespace wireup::spank {
namespace {

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

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

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

std::string parent_refusal(int parent_fd) {
  struct stat st {};
  if (::fstat(parent_fd, &st) != 0) return errno_text("stat");
  if (st.st_uid == 0 || (st.st_mode & S_ISVTX) != 0) return "";
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  return "owned by uid " + std::to_string(st.st_uid) + " and not sticky (mode " + mode + ")";
}

int open_seen_dir(int parent_fd, const std::string& name, const struct stat& seen) {
  const int fd = ::openat(parent_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat opened {};
  if (::fstat(fd, &opened) != 0 || !same_inode(opened, seen)) {
    ::close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

}  // namespace wireup::spank
