#include "supervision/control_link.hpp"

#include <unistd.h>

#include <cerrno>

#include "wireup/file_io.hpp"

namespace wireup {

ControlLink::~ControlLink() {
  if (fd_ >= 0) close(fd_);
}

bool ControlLink::send(ControlVerb verb, const std::vector<std::uint32_t>& args) {
  return io::send_all(fd_, format_message(verb, args));
}

bool ControlLink::receive(std::vector<ControlMessage>& out) {
  char chunk[4096];
  const ssize_t n = read(fd_, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  return reader_.feed(std::string_view(chunk, static_cast<std::size_t>(n)), out);
}

}  // namespace wireup
