#include "control_link.hpp"

#include <unistd.h>

#include <cerrno>

#include "net.hpp"
#include "wireup/text.hpp"

namespace wireup {

std::string format_message(const std::string& verb, std::vector<std::uint32_t> args) {
  std::string s = verb;
  for (auto a : args) s += " " + std::to_string(a);
  return s + "\n";
}

ControlLink::~ControlLink() {
  if (fd_ >= 0) close(fd_);
}

bool ControlLink::send(const std::string& verb, std::vector<std::uint32_t> args) {
  return write_all(fd_, format_message(verb, std::move(args)));
}

bool ControlLink::receive(std::vector<ControlMessage>& out) {
  char chunk[4096];
  const ssize_t n = read(fd_, chunk, sizeof chunk);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (n <= 0) return false;
  buf_.append(chunk, static_cast<std::size_t>(n));
  std::size_t nl;
  while ((nl = buf_.find('\n')) != std::string::npos) {
    const auto words = split(buf_.substr(0, nl), ' ');
    buf_.erase(0, nl + 1);
    ControlMessage m{words.at(0), {}};
    for (std::size_t i = 1; i < words.size(); ++i)
      m.args.push_back(static_cast<std::uint32_t>(parse_uint(words[i], UINT32_MAX).value_or(0)));
    out.push_back(std::move(m));
  }
  return true;
}

}  // namespace wireup
