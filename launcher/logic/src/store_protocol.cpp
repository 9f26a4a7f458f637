#include "wireup/store_protocol.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace wireup {

// What a query asks, whichever numbering the client uses.
enum class StoreProtocol::Cmd {
  Set,
  CompareSet,
  Get,
  Add,
  Check,
  Wait,
  NumKeys,
  Watch,
  Delete,
  Append,
  MultiGet,
  MultiSet,
  CancelWait,
  Validate,
  Ping,
};

namespace {

constexpr std::uint8_t kReady = 0, kNotReady = 1;            // CHECK
constexpr std::uint8_t kStopWaiting = 0, kWaitCanceled = 1;  // WAIT, CANCEL_WAIT
constexpr std::uint8_t kKeyUpdated = 0, kKeyCreated = 1, kKeyDeleted = 2, kCallbackRegistered = 3,
                       kKeyAppended = 4;  // WATCH_KEY

struct NeedMore {};  // the query has not fully arrived
struct Refused {
  std::string why;
};  // the connection is closed

template <class T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put_bytes(std::string& out, const std::string& s) {
  put<std::uint64_t>(out, s.size());
  out += s;
}

// The bytes owed to one connection, after what this feed already owes it.
std::string& to(StoreProtocol::Output& o, StoreProtocol::ConnId id) {
  if (o.sends.empty() || o.sends.back().first != id) o.sends.emplace_back(id, std::string());
  return o.sends.back().second;
}

}  // namespace

// Reads one query from the front of a connection's input; throws NeedMore
// before anything is consumed when the input ends early.
class StoreProtocol::Reader {
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

std::string StoreProtocol::Output::to(ConnId c) const {
  std::string s;
  for (const auto& [id, bytes] : sends)
    if (id == c) s += bytes;
  return s;
}

StoreProtocol::ConnId StoreProtocol::open() {
  const ConnId id = next_++;
  conns_.emplace(id, Conn{});
  return id;
}

void StoreProtocol::close(ConnId id) {
  forget(id, true);
  conns_.erase(id);
}

StoreProtocol::Output StoreProtocol::feed(ConnId id, std::string_view bytes) {
  Output o;
  Conn& c = conns_.at(id);
  if (c.closed) return o;
  c.in.append(bytes);
  try {
    while (handle_one(id, c, o)) {
    }
  } catch (const Refused& e) {
    std::erase_if(o.sends, [id](const auto& s) { return s.first == id; });
    o.close = e.why;
    c.closed = true;
    c.in.clear();
    forget(id, true);
  }
  return o;
}

void StoreProtocol::wake(const std::string& key, Output& o) {
  const auto it = waiting_.find(key);
  if (it == waiting_.end()) return;
  for (ConnId id : it->second) {
    Conn& c = conns_.at(id);
    if (c.awaited > 0 && --c.awaited == 0) put<std::uint8_t>(to(o, id), kStopWaiting);
  }
  waiting_.erase(it);
}

void StoreProtocol::notify(const std::string& key, std::uint8_t type, const std::string& old_v,
                           const std::string& new_v, Output& o) {
  const auto it = watching_.find(key);
  if (it == watching_.end()) return;
  for (ConnId id : it->second) {
    std::string& out = to(o, id);
    put<std::uint8_t>(out, type);
    put_bytes(out, key);
    put_bytes(out, old_v);
    put_bytes(out, new_v);
  }
}

void StoreProtocol::set(const std::string& key, std::string value, Output& o) {
  const auto it = data_.find(key);
  const bool created = it == data_.end();
  const std::string old_v = created ? std::string() : it->second;
  data_[key] = std::move(value);
  wake(key, o);
  notify(key, created ? kKeyCreated : kKeyUpdated, old_v, data_[key], o);
}

void StoreProtocol::compare_set(ConnId id, Reader& r, Output& o) {
  auto key = r.bytes();
  auto expected = r.bytes();
  auto desired = r.bytes();
  const auto it = data_.find(key);
  if (it == data_.end()) {
    if (expected.empty()) {
      data_[key] = desired;
      notify(key, kKeyCreated, expected, desired, o);
      put_bytes(to(o, id), desired);
    } else {
      put_bytes(to(o, id), expected);  // torch answers so for a missing key
    }
    return;
  }
  if (it->second == expected) {
    it->second = desired;
    notify(key, kKeyUpdated, expected, desired, o);
  }
  put_bytes(to(o, id), it->second);
}

void StoreProtocol::add(ConnId id, Reader& r, Output& o) {
  auto key = r.bytes();
  auto delta = r.value<std::int64_t>();
  const auto it = data_.find(key);
  const bool created = it == data_.end();
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
  data_[key] = std::to_string(delta);
  put<std::int64_t>(to(o, id), delta);
  wake(key, o);
  notify(key, created ? kKeyCreated : kKeyUpdated, old_v, data_[key], o);
}

void StoreProtocol::check_or_wait(ConnId id, Conn& c, bool wait, Reader& r, Output& o) {
  std::vector<std::string> keys(r.count());
  for (auto& k : keys) k = r.bytes();
  std::size_t missing = 0;
  for (const auto& k : keys) missing += data_.contains(k) ? 0 : 1;
  if (!wait) {
    put<std::uint8_t>(to(o, id), missing == 0 ? kReady : kNotReady);
  } else if (missing == 0) {
    put<std::uint8_t>(to(o, id), kStopWaiting);
  } else {
    for (const auto& k : keys)
      if (!data_.contains(k)) waiting_[k].push_back(id);
    c.awaited = missing;
  }
}

void StoreProtocol::delete_key(ConnId id, Reader& r, Output& o) {
  auto key = r.bytes();
  const auto it = data_.find(key);
  std::int64_t n = 0;
  if (it != data_.end()) {
    notify(key, kKeyDeleted, it->second, std::string(), o);
    data_.erase(it);
    n = 1;
  }
  put<std::int64_t>(to(o, id), n);
}

void StoreProtocol::append(Reader& r, Output& o) {
  auto key = r.bytes();
  auto more = r.bytes();
  const auto it = data_.find(key);
  const bool created = it == data_.end();
  if (created)
    data_[key] = more;
  else
    it->second += more;
  wake(key, o);
  notify(key, created ? kKeyCreated : kKeyAppended, std::string(), more, o);
}

void StoreProtocol::multi_get(ConnId id, Reader& r, Output& o) {
  std::vector<std::string> keys(r.count());
  for (auto& k : keys) k = r.bytes();
  for (const auto& k : keys) {
    const auto it = data_.find(k);
    if (it == data_.end()) throw Refused{"MULTI_GET of a missing key"};
    put_bytes(to(o, id), it->second);
  }
}

void StoreProtocol::multi_set(Reader& r, Output& o) {
  std::vector<std::pair<std::string, std::string>> kv(r.count());
  for (auto& [k, v] : kv) {
    k = r.bytes();
    v = r.bytes();
  }
  for (auto& [k, v] : kv) set(k, std::move(v), o);
}

// Mirrors TCPStoreMasterDaemon's handlers (torch/csrc/distributed/c10d/TCPStore.cpp).
// Each reads all of its query before it changes anything or replies.
void StoreProtocol::execute(ConnId id, Conn& c, Cmd cmd, Reader& r, Output& o) {
  switch (cmd) {
    case Cmd::Set: {
      auto key = r.bytes();
      auto value = r.bytes();
      return set(key, std::move(value), o);
    }
    case Cmd::CompareSet:
      return compare_set(id, r, o);
    case Cmd::Get: {
      auto key = r.bytes();
      const auto it = data_.find(key);
      if (it == data_.end()) throw Refused{"GET of a missing key"};  // torch closes too
      return put_bytes(to(o, id), it->second);
    }
    case Cmd::Add:
      return add(id, r, o);
    case Cmd::Check:
    case Cmd::Wait:
      return check_or_wait(id, c, cmd == Cmd::Wait, r, o);
    case Cmd::NumKeys:
      return put<std::int64_t>(to(o, id), static_cast<std::int64_t>(data_.size()));
    case Cmd::Watch: {
      auto key = r.bytes();
      watching_[key].push_back(id);
      return put<std::uint8_t>(to(o, id), kCallbackRegistered);
    }
    case Cmd::Delete:
      return delete_key(id, r, o);
    case Cmd::Append:
      return append(r, o);
    case Cmd::MultiGet:
      return multi_get(id, r, o);
    case Cmd::MultiSet:
      return multi_set(r, o);
    case Cmd::CancelWait:
      forget(id, false);
      return put<std::uint8_t>(to(o, id), kWaitCanceled);
    case Cmd::Validate:
      if (r.value<std::uint32_t>() != kValidationMagic) throw Refused{"a wrong VALIDATE number"};
      return;
    case Cmd::Ping:
      return put<std::uint32_t>(to(o, id), r.value<std::uint32_t>());
  }
}

bool StoreProtocol::handle_one(ConnId id, Conn& c, Output& o) {
  if (c.in.empty()) return false;
  const auto type = static_cast<std::uint8_t>(c.in[0]);
  if (c.dialect == Conn::Dialect::Unknown) {
    // A later torch opens with VALIDATE (0) and a magic number; the original
    // protocol's 0 is SET, whose 8-byte key length never looks like it.
    if (type == 0 && c.in.size() < 5) return false;
    std::uint32_t magic = 0;
    if (type == 0) std::memcpy(&magic, c.in.data() + 1, sizeof magic);
    c.dialect =
        type == 0 && magic == kValidationMagic ? Conn::Dialect::Validated : Conn::Dialect::Legacy;
  }
  // torch 1.x-2.2 (TCPStore.cpp's QueryType, SET first).
  static constexpr Cmd kLegacy[] = {Cmd::Set,       Cmd::CompareSet, Cmd::Get,      Cmd::Add,
                                    Cmd::Check,     Cmd::Wait,       Cmd::NumKeys,  Cmd::Watch,
                                    Cmd::Delete,    Cmd::Append,     Cmd::MultiGet, Cmd::MultiSet,
                                    Cmd::CancelWait};
  // Later torch: VALIDATE first, WATCH_KEY gone, PING added.
  static constexpr Cmd kValidated[] = {Cmd::Validate,   Cmd::Set,    Cmd::CompareSet, Cmd::Get,
                                       Cmd::Add,        Cmd::Check,  Cmd::Wait,       Cmd::NumKeys,
                                       Cmd::Delete,     Cmd::Append, Cmd::MultiGet,   Cmd::MultiSet,
                                       Cmd::CancelWait, Cmd::Ping};
  const bool legacy = c.dialect == Conn::Dialect::Legacy;
  const std::size_t n = legacy ? std::size(kLegacy) : std::size(kValidated);
  if (type >= n)
    throw Refused{"unknown query type " + std::to_string(type) +
                  " (not a TCPStore client, or a newer protocol than this agent store serves)"};
  Reader r(c.in);
  r.value<std::uint8_t>();
  try {
    execute(id, c, legacy ? kLegacy[type] : kValidated[type], r, o);
  } catch (const NeedMore&) {
    return false;  // nothing was changed: every handler reads all of its query first
  }
  c.in.erase(0, r.consumed());
  return true;
}

void StoreProtocol::forget(ConnId id, bool watches) {
  for (auto* m : {&waiting_, &watching_}) {
    if (m == &watching_ && !watches) continue;
    for (auto it = m->begin(); it != m->end();) {
      std::erase(it->second, id);
      it = it->second.empty() ? m->erase(it) : std::next(it);
    }
  }
  if (const auto it = conns_.find(id); it != conns_.end()) it->second.awaited = 0;
}

}  // namespace wireup
