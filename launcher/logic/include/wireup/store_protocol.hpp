#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace wireup {

// The server side of PyTorch's TCPStore wire protocol, and the key-value store
// it serves, without sockets: the agent store (`wireup-launch --agent-store`)
// feeds it each connection's bytes as they arrive and sends what it returns.
//
// Mirrors TCPStoreMasterDaemon (torch/csrc/distributed/c10d/TCPStore.cpp). A
// query is one type byte, then its arguments in host byte order: keys and
// values as a uint64 length and the bytes, key counts as uint64, ADD's delta
// as int64, VALIDATE's magic and PING's nonce as uint32. Both numberings are
// served, chosen per connection by its first query: torch 1.x-2.2 (SET=0 ...
// CANCEL_WAIT=12, with WATCH_KEY=7) and later torch, whose connections open
// with VALIDATE (0) and kValidationMagic (VALIDATE=0, SET=1 ... PING=13).
//
// A query that arrives in pieces is answered once it is whole. A query no
// TCPStore client sends (an unknown type, a key or value over kMaxItem bytes,
// over kMaxKeys keys, a wrong magic number), a GET or MULTI_GET of a missing
// key and an ADD to a non-number close the connection, as torch's server
// does, so its client fails instead of hanging.
class StoreProtocol {
 public:
  using ConnId = std::uint64_t;

  static constexpr std::uint32_t kValidationMagic = 0x3C85F7CE;
  static constexpr std::uint64_t kMaxItem = 1ull << 30;  // bytes in one key or value
  static constexpr std::uint64_t kMaxKeys = 1ull << 20;  // keys in one CHECK/WAIT/MULTI_*

  // What one feed produced.
  struct Output {
    // Bytes to send, in order for each connection: the fed one's replies, and
    // the WAIT wake-ups and WATCH_KEY notices a change owes any connection.
    std::vector<std::pair<ConnId, std::string>> sends;
    // Set when the fed connection is to be closed: why, for the log. Nothing
    // more is owed to it, not even the replies this feed produced before the
    // bad query (sends holds nothing for it); later feeds of it are ignored.
    // Call close() when its socket is gone, as for any connection.
    std::optional<std::string> close;

    std::string to(ConnId c) const;  // everything in sends for one connection
  };

  ConnId open();                                   // a new connection
  Output feed(ConnId id, std::string_view bytes);  // bytes it sent, in any pieces
  void close(ConnId id);  // it is gone: its pending WAIT and its watches too
  // A new round after a restart: every key goes, as from the fresh store torchrun
  // makes per round (torch 2.x's env:// no longer prefixes keys by attempt when it
  // uses the agent store). Connections, their pending WAITs and watches stay.
  void clear_keys() { data_.clear(); }

  std::size_t num_keys() const { return data_.size(); }

 private:
  enum class Cmd;
  class Reader;
  struct Conn {
    std::string in;  // what has arrived of the next query
    enum class Dialect { Unknown, Legacy, Validated } dialect = Dialect::Unknown;
    std::size_t awaited = 0;  // keys its pending WAIT still needs
    bool closed = false;      // refused: what it sends now is ignored
  };

  bool handle_one(ConnId id, Conn& c, Output& o);  // false: the next query is not whole yet
  void execute(ConnId id, Conn& c, Cmd cmd, Reader& r, Output& o);
  // The queries with more to do than one read and one reply.
  void compare_set(ConnId id, Reader& r, Output& o);
  void add(ConnId id, Reader& r, Output& o);
  void check_or_wait(ConnId id, Conn& c, bool wait, Reader& r, Output& o);
  void delete_key(ConnId id, Reader& r, Output& o);
  void append(Reader& r, Output& o);
  void multi_get(ConnId id, Reader& r, Output& o);
  void multi_set(Reader& r, Output& o);
  void forget(ConnId id, bool watches);  // its pending WAIT (and its watches)
  void set(const std::string& key, std::string value, Output& o);
  void wake(const std::string& key, Output& o);
  void notify(const std::string& key, std::uint8_t type, const std::string& old_v,
              const std::string& new_v, Output& o);

  ConnId next_ = 1;
  std::unordered_map<ConnId, Conn> conns_;
  std::unordered_map<std::string, std::string> data_;
  std::unordered_map<std::string, std::vector<ConnId>> waiting_, watching_;
};

}  // namespace wireup
