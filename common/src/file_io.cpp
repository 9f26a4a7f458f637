#include "wireup/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace fs = std::filesystem;

namespace wireup::io {

std::string shown(const fs::path& p) { return escape_text(p.string()); }

void throw_errno(const fs::path& p, const std::string& what) {
  throw InputError(shown(p) + ": " + what + ": " + std::strerror(errno));
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

Fd open_file(const fs::path& p, int flags, unsigned mode) {
  int fd;
  do {
    fd = ::open(p.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) throw_errno(p, "open");
  return Fd(fd);
}

void write_all(int fd, const void* data, std::size_t bytes, const fs::path& p) {
  const char* c = static_cast<const char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = ::write(fd, c + done, bytes - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw_errno(p, "write");
    done += static_cast<std::size_t>(n);
  }
}

bool send_all(int fd, std::string_view data) {
  for (std::size_t done = 0; done < data.size();) {
    const ssize_t n = ::send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void pread_all(int fd, void* data, std::size_t bytes, std::uint64_t offset, const fs::path& p) {
  char* c = static_cast<char*>(data);
  for (std::size_t done = 0; done < bytes;) {
    const ssize_t n = ::pread(fd, c + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(p, "read");
    if (n == 0)
      throw InputError(shown(p) + ": ends at byte " + std::to_string(offset + done) +
                       ", expected " + std::to_string(offset + bytes) + " (truncated)");
    done += static_cast<std::size_t>(n);
  }
}

void fsync_fd(int fd, const fs::path& p) {
  if (::fsync(fd) != 0) throw_errno(p, "fsync");
}

void fsync_path(const fs::path& p) {
  std::error_code ec;
  const bool dir = fs::is_directory(p, ec);
  const Fd fd = open_file(p, O_RDONLY | (dir ? O_DIRECTORY : 0));
  fsync_fd(fd.get(), p);
}

void fsync_parent(const fs::path& file) {
  fsync_path(file.parent_path().empty() ? fs::path(".") : file.parent_path());
}

void rename_durably(const fs::path& from, const fs::path& to) {
  if (std::rename(from.c_str(), to.c_str()) != 0) throw_errno(to, "rename from " + shown(from));
  fsync_parent(to);
}

void write_atomically(const fs::path& path, std::string_view text) {
  const fs::path tmp = path.string() + ".tmp";
  try {
    const Fd fd = open_file(tmp, O_WRONLY | O_CREAT | O_TRUNC);
    write_all(fd.get(), text.data(), text.size(), tmp);
    fsync_fd(fd.get(), tmp);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw_errno(path, "rename");
  } catch (...) {
    ::unlink(tmp.c_str());  // a full disk leaves no half-written file behind
    throw;
  }
  fsync_parent(path);
}

RegularFile open_regular(const fs::path& p, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  // It changes nothing for the reads of a regular file.
  RegularFile f{open_file(p, O_RDONLY | O_NONBLOCK), 0};
  struct stat st {};
  if (::fstat(f.fd.get(), &st) != 0) throw_errno(p, "stat");
  if (!S_ISREG(st.st_mode))
    throw InputError(shown(p) + ": not a regular file (expected a file, found " +
                     (S_ISDIR(st.st_mode)    ? "a directory"
                      : S_ISFIFO(st.st_mode) ? "a FIFO"
                      : S_ISSOCK(st.st_mode) ? "a socket"
                                             : "a device") +
                     ")");
  f.size = static_cast<std::uint64_t>(st.st_size);
  if (f.size > max_bytes)
    throw InputError(shown(p) + ": " + std::to_string(f.size) + " bytes, more than the " +
                     std::to_string(max_bytes) + " expected of this file");
  return f;
}

std::string read_text(const fs::path& p, std::uint64_t max_bytes) {
  const RegularFile f = open_regular(p, max_bytes);
  std::string text(f.size, '\0');
  pread_all(f.fd.get(), text.data(), text.size(), 0, p);
  return text;
}

void check_json_shape(std::string_view text, const fs::path& p, std::size_t max_depth,
                      std::uint64_t max_values) {
  std::size_t depth = 0;
  std::uint64_t values = 1;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{' || c == ',') {
      if (c != ',' && ++depth > max_depth)
        throw InputError(p.string() + ": JSON nested deeper than " + std::to_string(max_depth) +
                         " levels (at byte " + std::to_string(i) + ")");
      if (++values > max_values)
        throw InputError(p.string() + ": more than " + std::to_string(max_values) +
                         " JSON values (at byte " + std::to_string(i) + ")");
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
}

// ------------------------------------------------------------ StagingDir

namespace {

// OUTPUT/.PREFIX.PID.tmp directories whose process is gone.
void remove_stale(const fs::path& output, const std::string& prefix) {
  std::error_code ec;
  const std::string head = "." + prefix + ".", tail = ".tmp";
  for (const auto& entry : fs::directory_iterator(output, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= head.size() + tail.size() || !name.starts_with(head) ||
        !name.ends_with(tail))
      continue;
    const auto pid = parse_uint(
        std::string_view(name).substr(head.size(), name.size() - head.size() - tail.size()),
        INT32_MAX);
    if (!pid || *pid == 0) continue;
    if (::kill(static_cast<pid_t>(*pid), 0) == 0 || errno != ESRCH) continue;  // alive, or unknown
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
  }
}

}  // namespace

StagingDir::StagingDir(fs::path output, const std::string& prefix) : output_(std::move(output)) {
  remove_stale(output_, prefix);
  // The pid keeps concurrent runs into one directory apart.
  dir_ = output_ / ("." + prefix + "." + std::to_string(::getpid()) + ".tmp");
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (!fs::create_directory(dir_, ec) || ec)
    throw InputError("output " + wireup::quoted(output_.string()) +
                     ": cannot create staging directory: " + ec.message());
}

StagingDir::~StagingDir() { remove(); }

void StagingDir::remove() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void StagingDir::move_into_output(const std::vector<std::string>& names) {
  for (const auto& n : names) fsync_path(file(n));
  for (const auto& n : names)
    if (std::rename(file(n).c_str(), (output_ / n).c_str()) != 0)
      throw_errno(output_ / n, "cannot move into place");
  fsync_path(output_);
}

}  // namespace wireup::io
