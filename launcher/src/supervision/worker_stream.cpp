#include "supervision/worker_stream.hpp"

#include <unistd.h>

#include <cerrno>

namespace wireup {

void write_fd(int fd, const std::string& s) {
  std::size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a closed console must not stop supervision
    done += static_cast<std::size_t>(n);
  }
}

void say(const std::string& line) { write_fd(2, "wireup-launch: " + line + "\n"); }

void Stream::pump(const char* data, std::size_t n) {
  const std::string_view bytes(data, n);
  tail.feed(bytes);
  if (file >= 0) write_fd(file, std::string(bytes));
  if (console >= 0) {
    if (prefix)
      write_fd(console, prefix->feed(bytes));
    else
      write_fd(console, std::string(bytes));
  }
}
bool Stream::read_some() {
  char buf[65536];
  const ssize_t n = read(pipe, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  pump(buf, static_cast<std::size_t>(n));
  return true;
}
void Stream::close_all() {
  if (pipe >= 0) {
    // What the worker wrote before exiting: up to EOF, or up to an empty pipe
    // that a process it left behind (a daemon) still holds open.
    char buf[65536];
    for (;;) {
      const ssize_t n = read(pipe, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      pump(buf, static_cast<std::size_t>(n));
    }
    close(pipe);
    pipe = -1;
  }
  if (console >= 0 && prefix) write_fd(console, prefix->flush());
  if (file >= 0) close(file);
  file = -1;
}

}  // namespace wireup
