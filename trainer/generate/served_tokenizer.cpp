#include "generate/served_tokenizer.hpp"

#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "wireup/error.hpp"
#include "wireup/serve/tokenizer_wire.hpp"

extern char** environ;

namespace wireup::train::generate {
namespace {

void send_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) throw std::runtime_error("the tokenizer process is gone");
    done += static_cast<std::size_t>(w);
  }
}

void recv_exact(int fd, char* p, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::recv(fd, p + got, n - got, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw std::runtime_error("the tokenizer process is gone");
    got += static_cast<std::size_t>(r);
  }
}

}  // namespace

std::string find_wireup_prep() {
  if (const char* env = std::getenv("WIREUP_PREP"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto beside = self.parent_path() / "wireup-prep";
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  return "wireup-prep";  // posix_spawnp looks it up on PATH
}

ServedTokenizer::ServedTokenizer(const std::string& prep, const std::string& path,
                                 const std::string& what)
    : what_(what) {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::runtime_error("socketpair: " + std::string(std::strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, sv[1], STDIN_FILENO);  // dup2 clears CLOEXEC
  posix_spawn_file_actions_adddup2(&fa, sv[1], STDOUT_FILENO);
  std::string arg0 = prep, cmd = "serve-tokenizer", file = path;
  char* argv[] = {arg0.data(), cmd.data(), file.data(), nullptr};
  const int rc = ::posix_spawnp(&pid_, prep.c_str(), &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(sv[1]);
  fd_ = sv[0];
  if (rc != 0) {
    ::close(fd_);
    throw InputError(what_ + ": cannot start " + prep + " serve-tokenizer (" + std::strerror(rc) +
                     "; set WIREUP_PREP to wireup-prep's path)");
  }
  try {
    const std::vector<int> info = serve::ids_from_payload(ask('I', ""));
    if (info.size() != 3 || info[0] <= 0) throw std::runtime_error("a malformed answer");
    vocab_ = static_cast<std::uint32_t>(info[0]);
    bos_ = info[1];
    eos_ = info[2];
  } catch (const std::exception& e) {
    throw InputError(what_ + ": " + prep + " serve-tokenizer could not load it (" + e.what() +
                     "; its message is above)");
  }
}

ServedTokenizer::~ServedTokenizer() {
  if (fd_ >= 0) ::close(fd_);  // the child reads the end of its input and exits
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

std::string ServedTokenizer::ask(char op, const std::string& payload) const {
  send_all(fd_, serve::frame(op, payload));
  char header[serve::kHeaderBytes];
  recv_exact(fd_, header, sizeof header);
  const auto n = serve::payload_length(header);
  if (!n) throw std::runtime_error("an answer over the size limit");
  std::string body(*n, '\0');
  if (*n > 0) recv_exact(fd_, body.data(), *n);
  if (header[0] == 'X') throw std::runtime_error(what_ + ": " + body);
  if (header[0] != 'O') throw std::runtime_error("a malformed answer");
  return body;
}

std::vector<int> ServedTokenizer::encode(const std::string& text) const {
  return serve::ids_from_payload(ask('E', text));
}

std::string ServedTokenizer::decode(const std::vector<int>& ids) const {
  return ask('D', serve::ids_payload(ids));
}

int ServedTokenizer::special_id(std::string_view text) const {
  const auto id = serve::ids_from_payload(ask('S', std::string(text)));
  return id.size() == 1 ? id[0] : -1;
}

}  // namespace wireup::train::generate
