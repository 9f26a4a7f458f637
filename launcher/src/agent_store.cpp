#include "agent_store.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <list>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace wireup {

namespace {

// What a query asks, whichever numbering the client uses.
enum class Cmd {
  Set, CompareSet, Get, Add, Check, Wait, NumKeys, Watch, Delete,
  Append, MultiGet, MultiSet, CancelWait, Validate, Ping,
};
// torch 1.x-2.2 (TCPStore.cpp's QueryType, SET first).
constexpr Cmd kLegacy[] = {Cmd::Set,    Cmd::CompareSet, Cmd::Get,      Cmd::Add,       Cmd::Check,
                           Cmd::Wait,   Cmd::NumKeys,    Cmd::Watch,    Cmd::Delete,    Cmd::Append,
                           Cmd::MultiGet, Cmd::MultiSet, Cmd::CancelWait};
// Later torch: VALIDATE first, WATCH_KEY gone, PING added.
constexpr Cmd kValidated[] = {Cmd::Validate, Cmd::Set,      Cmd::CompareSet, Cmd::Get,       Cmd::Add,
                              Cmd::Check,    Cmd::Wait,     Cmd::NumKeys,    Cmd::Delete,    Cmd::Append,
                              Cmd::MultiGet, Cmd::MultiSet, Cmd::CancelWait, Cmd::Ping};
constexpr std::uint32_t kValidationMagic = 0x3C85F7CE;

constexpr std::uint8_t kReady = 0, kNotReady = 1;              // CHECK
constexpr std::uint8_t kStopWaiting = 0, kWaitCanceled = 1;    // WAIT, CANCEL_WAIT
constexpr std::uint8_t kKeyUpdated = 0, kKeyCreated = 1, kKeyDeleted = 2,
                       kCallbackRegistered = 3, kKeyAppended = 4;  // WATCH_KEY

constexpr std::uint64_t kMaxItem = 1ull << 30;  // one key or value
constexpr std::uint64_t kMaxKeys = 1ull << 20;  // keys in one CHECK/WAIT/MULTI_*

struct NeedMore {};                     // the query has not fully arrived
struct Refused { std::string why; };    // the connection is closed

struct Conn {
  int fd = -1;
  std::string peer;
  std::string in, out;
  enum class Dialect { Unknown, Legacy, Validated } dialect = Dialect::Unknown;
  std::size_t awaited = 0;  // keys the pending WAIT still needs
  bool dead = false;
};

// Reads one query from the front of a connection's input; throws NeedMore
// before anything is consumed when the input ends early.
class Reader {
 public:
  explicit Reader(const std::string& b) : b_(b) {}
  template <class T>
  T value() {
    T v;
    if (b_.size() - pos_ < sizeof v) throw NeedMore{};
    std::memcpy(&v, b_.data() + pos_, sizeof v);  // torch sends host byte order
    pos_ += sizeof v;
    return v;
  }
  std::string bytes() {  // uint64 length, then the bytes (tcputil::sendString/sendVector)
    const auto n = value<std::uint64_t>();
    if (n > kMaxItem) throw Refused{"a key or value of " + std::to_string(n) + " bytes"};
    if (b_.size() - pos_ < n) throw NeedMore{};
    std::string s = b_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  std::uint64_t count() {
    const auto n = value<std::uint64_t>();
    if (n > kMaxKeys) throw Refused{"a query of " + std::to_string(n) + " keys"};
    return n;
  }
  std::size_t consumed() const { return pos_; }

 private:
  const std::string& b_;
  std::size_t pos_ = 0;
};

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_bytes(std::string& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  out += s;
}

void say(const std::string& line) {
  const std::string s = "wireup-launch: agent store: " + line + "\n";
  [[maybe_unused]] ssize_t n = write(2, s.data(), s.size());
}

}  // namespace

struct AgentStore::Impl {
  int listen_fd = -1, wake_fd = -1;
  std::thread thread;
  std::list<Conn> conns;  // stable addresses: the maps below point into it
  std::unordered_map<std::string, std::string> data;
  std::unordered_map<std::string, std::vector<Conn*>> waiting, watching;

  void run();
  void accept_new();
  void read_from(Conn& c);
  bool handle_one(Conn& c);  // false when the next query has not fully arrived
  void execute(Conn& c, Cmd cmd, Reader& r);
  void send_pending(Conn& c);
  void forget(Conn& c, bool watches);  // its pending WAIT (and its watches)

  void set(const std::string& key, std::string value);
  void wake(const std::string& key);
  void notify(const std::string& key, std::uint8_t type, const std::string& old_v,
              const std::string& new_v);
};

void AgentStore::Impl::wake(const std::string& key) {
  const auto it = waiting.find(key);
  if (it == waiting.end()) return;
  for (Conn* c : it->second)
    if (c->awaited > 0 && --c->awaited == 0) put<std::uint8_t>(c->out, kStopWaiting);
  waiting.erase(it);
}

void AgentStore::Impl::notify(const std::string& key, std::uint8_t type, const std::string& old_v,
                              const std::string& new_v) {
  const auto it = watching.find(key);
  if (it == watching.end()) return;
  for (Conn* c : it->second) {
    put<std::uint8_t>(c->out, type);
    put_bytes(c->out, key);
    put_bytes(c->out, old_v);
    put_bytes(c->out, new_v);
  }
}

void AgentStore::Impl::set(const std::string& key, std::string value) {
  const auto it = data.find(key);
  const bool created = it == data.end();
  const std::string old_v = created ? std::string() : it->second;
  data[key] = std::move(value);
  wake(key);
  notify(key, created ? kKeyCreated : kKeyUpdated, old_v, data[key]);
}

// Mirrors TCPStoreMasterDaemon's handlers (torch/csrc/distributed/c10d/TCPStore.cpp).
void AgentStore::Impl::execute(Conn& c, Cmd cmd, Reader& r) {
  std::string& out = c.out;
  switch (cmd) {
    case Cmd::Set: {
      auto key = r.bytes();
      auto value = r.bytes();
      set(key, std::move(value));
      return;
    }
    case Cmd::CompareSet: {
      auto key = r.bytes();
      auto expected = r.bytes();
      auto desired = r.bytes();
      const auto it = data.find(key);
      if (it == data.end()) {
        if (expected.empty()) {
          data[key] = desired;
          notify(key, kKeyCreated, expected, desired);
          put_bytes(out, desired);
        } else {
          put_bytes(out, expected);  // torch answers so for a missing key
        }
      } else {
        if (it->second == expected) {
          it->second = desired;
          notify(key, kKeyUpdated, expected, desired);
        }
        put_bytes(out, it->second);
      }
      return;
    }
    case Cmd::Get: {
      auto key = r.bytes();
      const auto it = data.find(key);
      if (it == data.end()) throw Refused{"GET of a missing key"};  // torch closes too
      put_bytes(out, it->second);
      return;
    }
    case Cmd::Add: {
      auto key = r.bytes();
      auto delta = r.value<std::int64_t>();
      const auto it = data.find(key);
      const bool created = it == data.end();
      std::string old_v;
      if (!created) {
        old_v = it->second;
        char* end = nullptr;
        errno = 0;
        const long long cur = std::strtoll(old_v.c_str(), &end, 10);
        if (old_v.empty() || errno != 0 || end != old_v.c_str() + old_v.size())
          throw Refused{"ADD to a key whose value is not a number"};
        delta = static_cast<std::int64_t>(static_cast<std::uint64_t>(delta) +
                                          static_cast<std::uint64_t>(cur));
      }
      data[key] = std::to_string(delta);
      put<std::int64_t>(out, delta);
      wake(key);
      notify(key, created ? kKeyCreated : kKeyUpdated, old_v, data[key]);
      return;
    }
    case Cmd::Check:
    case Cmd::Wait: {
      std::vector<std::string> keys(r.count());
      for (auto& k : keys) k = r.bytes();
      std::size_t missing = 0;
      for (const auto& k : keys) missing += data.count(k) == 0;
      if (cmd == Cmd::Check) {
        put<std::uint8_t>(out, missing == 0 ? kReady : kNotReady);
      } else if (missing == 0) {
        put<std::uint8_t>(out, kStopWaiting);
      } else {
        for (const auto& k : keys)
          if (data.count(k) == 0) waiting[k].push_back(&c);
        c.awaited = missing;
      }
      return;
    }
    case Cmd::NumKeys:
      put<std::int64_t>(out, static_cast<std::int64_t>(data.size()));
      return;
    case Cmd::Watch: {
      auto key = r.bytes();
      watching[key].push_back(&c);
      put<std::uint8_t>(out, kCallbackRegistered);
      return;
    }
    case Cmd::Delete: {
      auto key = r.bytes();
      const auto it = data.find(key);
      std::int64_t n = 0;
      if (it != data.end()) {
        notify(key, kKeyDeleted, it->second, std::string());
        data.erase(it);
        n = 1;
      }
      put<std::int64_t>(out, n);
      return;
    }
    case Cmd::Append: {
      auto key = r.bytes();
      auto more = r.bytes();
      const auto it = data.find(key);
      const bool created = it == data.end();
      if (created) data[key] = more;
      else it->second += more;
      wake(key);
      notify(key, created ? kKeyCreated : kKeyAppended, std::string(), more);
      return;
    }
    case Cmd::MultiGet: {
      std::vector<std::string> keys(r.count());
      for (auto& k : keys) k = r.bytes();
      for (const auto& k : keys) {
        const auto it = data.find(k);
        if (it == data.end()) throw Refused{"MULTI_GET of a missing key"};
        put_bytes(out, it->second);
      }
      return;
    }
    case Cmd::MultiSet: {
      std::vector<std::pair<std::string, std::string>> kv(r.count());
      for (auto& [k, v] : kv) {
        k = r.bytes();
        v = r.bytes();
      }
      for (auto& [k, v] : kv) set(k, std::move(v));
      return;
    }
    case Cmd::CancelWait:
      forget(c, false);
      put<std::uint8_t>(out, kWaitCanceled);
      return;
    case Cmd::Validate:
      if (r.value<std::uint32_t>() != kValidationMagic) throw Refused{"a wrong VALIDATE number"};
      return;
    case Cmd::Ping:
      put<std::uint32_t>(out, r.value<std::uint32_t>());
      return;
  }
}

bool AgentStore::Impl::handle_one(Conn& c) {
  if (c.in.empty()) return false;
  const auto type = static_cast<std::uint8_t>(c.in[0]);
  if (c.dialect == Conn::Dialect::Unknown) {
    // A later torch opens with VALIDATE (0) and a magic number; the original
    // protocol's 0 is SET, whose 8-byte key length never looks like it.
    if (type == 0 && c.in.size() < 5) return false;
    std::uint32_t magic = 0;
    if (type == 0) std::memcpy(&magic, c.in.data() + 1, sizeof magic);
    c.dialect = type == 0 && magic == kValidationMagic ? Conn::Dialect::Validated
                                                       : Conn::Dialect::Legacy;
  }
  const bool legacy = c.dialect == Conn::Dialect::Legacy;
  const std::size_t n = legacy ? std::size(kLegacy) : std::size(kValidated);
  if (type >= n)
    throw Refused{"unknown query type " + std::to_string(type) +
                  " (not a TCPStore client, or a newer protocol than this agent store serves)"};
  Reader r(c.in);
  r.value<std::uint8_t>();
  try {
    execute(c, legacy ? kLegacy[type] : kValidated[type], r);
  } catch (const NeedMore&) {
    return false;  // nothing was changed: every handler reads all of its query first
  }
  c.in.erase(0, r.consumed());
  return true;
}

void AgentStore::Impl::forget(Conn& c, bool watches) {
  for (auto* m : {&waiting, &watching}) {
    if (m == &watching && !watches) continue;
    for (auto it = m->begin(); it != m->end();) {
      std::erase(it->second, &c);
      it = it->second.empty() ? m->erase(it) : std::next(it);
    }
  }
  c.awaited = 0;
}

void AgentStore::Impl::accept_new() {
  for (;;) {
    sockaddr_in6 sa{};
    socklen_t len = sizeof sa;
    const int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&sa), &len,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection reset before it was accepted
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Conn& c = conns.emplace_back();
    c.fd = fd;
    char text[INET6_ADDRSTRLEN] = {};
    if (sa.sin6_family == AF_INET)
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&sa)->sin_addr, text, sizeof text);
    else if (sa.sin6_family == AF_INET6)
      inet_ntop(AF_INET6, &sa.sin6_addr, text, sizeof text);
    c.peer = text;
  }
}

void AgentStore::Impl::read_from(Conn& c) {
  char buf[65536];
  for (;;) {
    const ssize_t n = read(c.fd, buf, sizeof buf);
    if (n > 0) {
      c.in.append(buf, static_cast<std::size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) c.dead = true;  // closed by the client
    break;
  }
  try {
    while (handle_one(c)) {}
  } catch (const Refused& e) {
    say("closing the connection from " + c.peer + ": " + e.why);
    c.dead = true;
  }
}

void AgentStore::Impl::send_pending(Conn& c) {
  while (!c.out.empty() && !c.dead) {
    const ssize_t n = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.out.erase(0, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (!(n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))) c.dead = true;
      return;
    }
  }
}

void AgentStore::Impl::run() {
  std::vector<pollfd> fds;
  std::vector<Conn*> order;
  for (;;) {
    fds.assign({{wake_fd, POLLIN, 0}, {listen_fd, POLLIN, 0}});
    order.clear();
    for (auto& c : conns) {
      fds.push_back({c.fd, static_cast<short>(POLLIN | (c.out.empty() ? 0 : POLLOUT)), 0});
      order.push_back(&c);
    }
    if (poll(fds.data(), fds.size(), -1) < 0) {
      if (errno == EINTR) continue;
      say(std::string("poll: ") + std::strerror(errno) + "; no longer serving");
      return;
    }
    if (fds[0].revents) return;  // stopping
    for (std::size_t i = 0; i < order.size(); ++i)
      if (fds[2 + i].revents & (POLLIN | POLLHUP | POLLERR)) read_from(*order[i]);
    if (fds[1].revents & POLLIN) accept_new();
    for (auto& c : conns) send_pending(c);  // replies, and wake-ups of other waiters
    for (auto it = conns.begin(); it != conns.end();) {
      if (!it->dead) { ++it; continue; }
      forget(*it, true);
      close(it->fd);
      it = conns.erase(it);
    }
  }
}

AgentStore::AgentStore(int listen_fd) : impl_(std::make_unique<Impl>()) {
  impl_->listen_fd = listen_fd;
  impl_->wake_fd = eventfd(0, EFD_CLOEXEC);
  if (impl_->wake_fd < 0) {
    close(listen_fd);
    throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  }
  const int flags = fcntl(listen_fd, F_GETFL);
  fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK);
  Impl* impl = impl_.get();
  impl_->thread = std::thread([impl] {
    try {
      impl->run();
    } catch (const std::exception& e) {  // e.g. out of memory: clients then fail, not hang
      say(std::string(e.what()) + "; no longer serving");
    }
    for (auto& c : impl->conns) close(c.fd);
    impl->conns.clear();
  });
}

AgentStore::~AgentStore() {
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t n = write(impl_->wake_fd, &one, sizeof one);
  impl_->thread.join();
  close(impl_->wake_fd);
  close(impl_->listen_fd);
}

}  // namespace wireup
