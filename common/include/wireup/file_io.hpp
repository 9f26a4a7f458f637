#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// wireup_file_io: the one copy of the file plumbing that data, checkpoints and
// the launcher share. Every failure is an InputError naming the path and what
// went wrong ("PATH: WHAT: strerror"); reads and writes retry EINTR and short
// counts. Durable means: the data is fsynced before the name appears, and the
// directory is fsynced after.
namespace wireup::io {

// A path as a message shows it: escape_text (wireup/text.hpp), so a name
// with a newline or an escape sequence stays one line and cannot forge
// another. Every path in a message of this module, and of the trainer's
// checkpoints and memory snapshots, goes through it.
std::string shown(const std::filesystem::path& p);

// Throws InputError "PATH: WHAT: <strerror(errno)>" (PATH shown()).
[[noreturn]] void throw_errno(const std::filesystem::path& p, const std::string& what);

// An owned file descriptor: closed exactly once, on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Hands the descriptor to the caller, who closes it; this Fd is left empty.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC, retried on EINTR; InputError naming the path.
Fd open_file(const std::filesystem::path& p, int flags, unsigned mode = 0644);

// All `bytes` to `fd` (a file); InputError naming `p` on any failure.
void write_all(int fd, const void* data, std::size_t bytes, const std::filesystem::path& p);
// All of `data` to a socket or pipe, without SIGPIPE; false when the peer is
// gone or the write fails (a lost peer is the caller's event, not an error).
bool send_all(int fd, std::string_view data);
// Exactly `bytes` from `offset`; InputError "PATH: ends at byte N, expected M
// (truncated)" when the file is shorter.
void pread_all(int fd, void* data, std::size_t bytes, std::uint64_t offset,
               const std::filesystem::path& p);

// fsync of an open file; of a file or directory by path; of a file's directory.
void fsync_fd(int fd, const std::filesystem::path& p);
void fsync_path(const std::filesystem::path& p);
void fsync_parent(const std::filesystem::path& file);

// rename(2) of `from` over `to`, then fsync of `to`'s directory.
void rename_durably(const std::filesystem::path& from, const std::filesystem::path& to);

// `text` into `path` durably: PATH.tmp, fsync, rename over PATH, fsync of the
// directory. A failure (a full disk) leaves neither PATH.tmp nor a partial PATH.
void write_atomically(const std::filesystem::path& path, std::string_view text);

// A regular file opened for reading and its size: open_regular opens it
// non-blocking and checks it on the open descriptor, so a FIFO, a device or a
// directory is refused ("PATH: not a regular file (expected a file, found a
// FIFO)") and never blocks; a file of more than `max_bytes` is refused
// ("PATH: N bytes, more than the M expected of this file") before anything is
// read. For binary files read in parts (shards): the caller checks the size
// against what the file says of itself before it allocates.
struct RegularFile {
  Fd fd;
  std::uint64_t size = 0;
};
RegularFile open_regular(const std::filesystem::path& p, std::uint64_t max_bytes);

// The whole text of a regular file of at most `max_bytes`. The file is opened
// non-blocking and checked on the open descriptor, so a FIFO, a device or a
// directory is refused ("PATH: not a regular file") and never blocks; a larger
// file is refused before anything is read.
std::string read_text(const std::filesystem::path& p, std::uint64_t max_bytes);

// Checks JSON text read from `p` before it is parsed, so a hostile file
// cannot make the parse tree many times its size: InputError "PATH: JSON
// nested deeper than D levels (at byte N)" or "PATH: more than M JSON values
// (at byte N)". Values are counted as a parser would make them (each opening
// bracket and each comma outside strings starts one), which bounds the tree
// to about 100 bytes per allowed value. The syntax itself is the parser's.
void check_json_shape(std::string_view text, const std::filesystem::path& p, std::size_t max_depth,
                      std::uint64_t max_values);

// A hidden directory OUTPUT/.PREFIX.PID.tmp in which a run writes its output
// files, moved into OUTPUT only when complete, so readers never see a
// half-written file under its final name. Removed (with what is left in it) on
// destruction. Directories left by runs killed outright (SIGKILL, power loss)
// are removed by the next StagingDir in the same OUTPUT with the same prefix,
// once no process has their pid.
class StagingDir {
 public:
  // OUTPUT must exist. InputError naming OUTPUT when the directory cannot be made.
  StagingDir(std::filesystem::path output, const std::string& prefix);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  std::filesystem::path file(const std::string& name) const { return dir_ / name; }

  // fsyncs each named file, renames them into OUTPUT in the given order (each
  // replacing any file of that name), then fsyncs OUTPUT.
  void move_into_output(const std::vector<std::string>& names);
  // Removes the directory and its contents now (idempotent).
  void remove();

 private:
  std::filesystem::path output_;
  std::filesystem::path dir_;
};

}  // namespace wireup::io
