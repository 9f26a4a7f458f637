// The agent store's TCPStore protocol on its own: requests built byte by byte
// from torch's layout (TCPStore.cpp: a type byte, then uint64 length + bytes
// for each key or value, uint64 key counts, int64 ADD deltas, uint32 magic and
// PING nonce, all in host byte order), replies compared byte for byte.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>

#include "wireup/store_protocol.hpp"

using namespace wireup;
using Id = StoreProtocol::ConnId;

namespace {

template <class T>
std::string raw(T v) {
  std::string s(sizeof v, '\0');
  std::memcpy(s.data(), &v, sizeof v);
  return s;
}
std::string u8(std::uint8_t v) { return raw(v); }
std::string u32(std::uint32_t v) { return raw(v); }
std::string u64(std::uint64_t v) { return raw(v); }
std::string i64(std::int64_t v) { return raw(v); }
std::string str(std::string_view s) { return u64(s.size()) + std::string(s); }
std::string keys(std::initializer_list<std::string_view> ks) {
  std::string s = u64(ks.size());
  for (auto k : ks) s += str(k);
  return s;
}

// torch 1.x-2.2's QueryType, and later torch's.
namespace legacy {
enum : std::uint8_t { SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS, WATCH_KEY, DELETE_KEY,
                      APPEND, MULTI_GET, MULTI_SET, CANCEL_WAIT };
}
namespace later {
enum : std::uint8_t { VALIDATE, SET, COMPARE_SET, GET, ADD, CHECK, WAIT, GETNUMKEYS, DELETE_KEY,
                      APPEND, MULTI_GET, MULTI_SET, CANCEL_WAIT, PING };
}
const std::string kHello = u8(later::VALIDATE) + u32(0x3C85F7CE);

// The queries both numberings share, by their number in one of them.
struct Numbering {
  const char* name;
  std::string hello;  // what a client sends first
  std::uint8_t set, compare_set, get, add, check, wait, num_keys, del, append, multi_get,
      multi_set, cancel_wait;
};
const Numbering kLegacy{"legacy", "",
                        legacy::SET, legacy::COMPARE_SET, legacy::GET, legacy::ADD,
                        legacy::CHECK, legacy::WAIT, legacy::GETNUMKEYS, legacy::DELETE_KEY,
                        legacy::APPEND, legacy::MULTI_GET, legacy::MULTI_SET, legacy::CANCEL_WAIT};
const Numbering kLater{"VALIDATE first", kHello,
                       later::SET, later::COMPARE_SET, later::GET, later::ADD,
                       later::CHECK, later::WAIT, later::GETNUMKEYS, later::DELETE_KEY,
                       later::APPEND, later::MULTI_GET, later::MULTI_SET, later::CANCEL_WAIT};

// One connection; ask() feeds a query and returns what it owes this connection.
struct Client {
  StoreProtocol& p;
  Id id;
  explicit Client(StoreProtocol& store) : p(store), id(store.open()) {}
  std::string ask(const std::string& bytes) {
    const auto o = p.feed(id, bytes);
    INFO(o.close.value_or(""));
    REQUIRE_FALSE(o.close);
    return o.to(id);
  }
  std::string refused(const std::string& bytes) {  // the reason it is closed
    const auto o = p.feed(id, bytes);
    CHECK(o.to(id).empty());
    REQUIRE(o.close);
    return *o.close;
  }
};

}  // namespace

TEST_CASE("store protocol: every shared query, byte-exact, in both numberings") {
  for (const Numbering* n : {&kLegacy, &kLater}) {
    INFO(n->name);
    StoreProtocol p;
    Client c(p);
    const auto q = [](std::uint8_t type) { return u8(type); };
    CHECK(c.ask(n->hello).empty());

    CHECK(c.ask(q(n->set) + str("k") + str(std::string("\0\xff", 2))).empty());  // SET: no reply
    CHECK(c.ask(q(n->get) + str("k")) == str(std::string("\0\xff", 2)));
    CHECK(c.ask(q(n->set) + str("k") + str("v")).empty());
    CHECK(c.ask(q(n->get) + str("k")) == str("v"));

    CHECK(c.ask(q(n->add) + str("n") + i64(5)) == i64(5));
    CHECK(c.ask(q(n->add) + str("n") + i64(-2)) == i64(3));
    CHECK(c.ask(q(n->get) + str("n")) == str("3"));

    CHECK(c.ask(q(n->compare_set) + str("c") + str("") + str("x")) == str("x"));
    CHECK(c.ask(q(n->compare_set) + str("c") + str("y") + str("z")) == str("x"));
    CHECK(c.ask(q(n->compare_set) + str("c") + str("x") + str("z")) == str("z"));

    CHECK(c.ask(q(n->check) + keys({"k", "n"})) == u8(0));       // READY
    CHECK(c.ask(q(n->check) + keys({"k", "nope"})) == u8(1));    // NOT_READY
    CHECK(c.ask(q(n->wait) + keys({"k", "n", "c"})) == u8(0));  // STOP_WAITING at once
    CHECK(c.ask(q(n->num_keys)) == i64(3));

    CHECK(c.ask(q(n->append) + str("a") + str("x")).empty());  // APPEND: no reply
    CHECK(c.ask(q(n->append) + str("a") + str("yz")).empty());
    CHECK(c.ask(q(n->get) + str("a")) == str("xyz"));

    CHECK(c.ask(q(n->multi_set) + u64(2) + str("m1") + str("v1") + str("m2") + str("v2")).empty());
    CHECK(c.ask(q(n->multi_get) + keys({"m2", "m1", "a"})) == str("v2") + str("v1") + str("xyz"));

    CHECK(c.ask(q(n->del) + str("a")) == i64(1));
    CHECK(c.ask(q(n->del) + str("a")) == i64(0));
    CHECK(c.ask(q(n->num_keys)) == i64(5));
    CHECK(p.num_keys() == 5);
    CHECK(c.ask(q(n->cancel_wait)) == u8(1));  // WAIT_CANCELED

    // Several queries in one feed: the replies in order.
    CHECK(c.ask(q(n->get) + str("k") + q(n->set) + str("k") + str("w") + q(n->get) + str("k") +
                q(n->num_keys)) == str("v") + str("w") + i64(5));
  }
}

TEST_CASE("store protocol: WATCH_KEY (torch 1.x) notices, PING (later torch), one store for both") {
  StoreProtocol p;
  Client old(p), w(p), neu(p);
  CHECK(w.ask(u8(legacy::WATCH_KEY) + str("w")) == u8(3));  // KEY_CALLBACK_REGISTERED
  // type, key, old value, new value: CREATED 1, UPDATED 0, DELETED 2, APPENDED 4.
  auto o = p.feed(old.id, u8(legacy::SET) + str("w") + str("v1"));
  CHECK(o.to(w.id) == u8(1) + str("w") + str("") + str("v1"));
  CHECK(o.to(old.id).empty());
  o = p.feed(old.id, u8(legacy::SET) + str("w") + str("v2"));
  CHECK(o.to(w.id) == u8(0) + str("w") + str("v1") + str("v2"));
  o = p.feed(old.id, u8(legacy::APPEND) + str("w") + str("x"));
  CHECK(o.to(w.id) == u8(4) + str("w") + str("") + str("x"));
  o = p.feed(old.id, u8(legacy::COMPARE_SET) + str("w") + str("v2x") + str("c"));
  CHECK(o.to(w.id) == u8(0) + str("w") + str("v2x") + str("c"));
  CHECK(o.to(old.id) == str("c"));
  o = p.feed(old.id, u8(legacy::DELETE_KEY) + str("w"));
  CHECK(o.to(w.id) == u8(2) + str("w") + str("c") + str(""));
  o = p.feed(old.id, u8(legacy::ADD) + str("w") + i64(7));
  CHECK(o.to(w.id) == u8(1) + str("w") + str("") + str("7"));
  o = p.feed(old.id, u8(legacy::SET) + str("other") + str("1"));
  CHECK(o.sends.empty());  // nobody watches it

  CHECK(neu.ask(kHello + u8(later::PING) + u32(4242)) == u32(4242));
  CHECK(neu.ask(u8(later::GET) + str("w")) == str("7"));  // legacy's key, later's query
  CHECK(neu.ask(u8(later::SET) + str("from-later") + str("x")).empty());
  CHECK(old.ask(u8(legacy::GET) + str("from-later")) == str("x"));
  // A watcher that has gone is told nothing more.
  p.close(w.id);
  CHECK(p.feed(old.id, u8(legacy::SET) + str("w") + str("8")).sends.empty());
}

TEST_CASE("store protocol: a query split across feeds is answered once whole") {
  const std::string queries = kHello + u8(later::SET) + str("key") + str("value") +
                              u8(later::ADD) + str("n") + i64(-9) + u8(later::CHECK) +
                              keys({"key", "n"}) + u8(later::GET) + str("key") +
                              u8(later::PING) + u32(77);
  const std::string replies = i64(-9) + u8(0) + str("value") + u32(77);
  for (std::size_t chunk : {1, 2, 3, 5, 8, 13, 1000}) {
    INFO("chunk " << chunk);
    StoreProtocol p;
    Client c(p);
    std::string got;
    for (std::size_t i = 0; i < queries.size(); i += chunk) got += c.ask(queries.substr(i, chunk));
    CHECK(got == replies);
  }

  // Nothing before the last byte, and a SET takes effect as soon as it is whole.
  StoreProtocol p;
  Client c(p), other(p);
  const std::string set = u8(legacy::SET) + str("k") + str("v");
  for (std::size_t i = 0; i + 1 < set.size(); ++i) CHECK(c.ask(set.substr(i, 1)).empty());
  CHECK(other.ask(u8(legacy::CHECK) + keys({"k"})) == u8(1));
  CHECK(c.ask(set.substr(set.size() - 1)).empty());
  CHECK(other.ask(u8(legacy::CHECK) + keys({"k"})) == u8(0));
  const std::string get = u8(legacy::GET) + str("k");
  CHECK(c.ask(get.substr(0, 4)).empty());
  CHECK(c.ask(get.substr(4)) == str("v"));
}

TEST_CASE("store protocol: WAIT ends when other connections supply its keys") {
  StoreProtocol p;
  Client a(p), b(p), setter(p), late(p);
  CHECK(a.ask(u8(legacy::WAIT) + keys({"x", "y"})).empty());
  CHECK(b.ask(kHello + u8(later::WAIT) + keys({"y"})).empty());

  auto o = p.feed(setter.id, u8(legacy::SET) + str("x") + str("1"));
  CHECK(o.sends.empty());  // a still lacks y
  o = p.feed(setter.id, u8(legacy::ADD) + str("y") + i64(1));
  CHECK(o.to(setter.id) == i64(1));
  CHECK(o.to(a.id) == u8(0));  // STOP_WAITING, to both waiters
  CHECK(o.to(b.id) == u8(0));
  CHECK(p.feed(setter.id, u8(legacy::SET) + str("y") + str("2")).sends.empty());  // told once

  // APPEND and MULTI_SET wake too; a waiter that cancelled or went does not hear.
  CHECK(a.ask(u8(legacy::WAIT) + keys({"z"})).empty());
  CHECK(p.feed(setter.id, u8(legacy::APPEND) + str("z") + str("+")).to(a.id) == u8(0));
  CHECK(a.ask(u8(legacy::WAIT) + keys({"m1", "m2"})).empty());
  o = p.feed(setter.id, u8(legacy::MULTI_SET) + u64(2) + str("m1") + str("") + str("m2") + str(""));
  CHECK(o.to(a.id) == u8(0));
  CHECK(a.ask(u8(legacy::WAIT) + keys({"c"})).empty());
  CHECK(a.ask(u8(legacy::CANCEL_WAIT)) == u8(1));
  CHECK(late.ask(u8(legacy::WAIT) + keys({"c"})).empty());
  p.close(late.id);
  CHECK(p.feed(setter.id, u8(legacy::SET) + str("c") + str("1")).sends.empty());
  // A SET and a WAIT for it in one feed, from one connection.
  CHECK(a.ask(u8(legacy::WAIT) + keys({"d"}) + u8(legacy::SET) + str("d") + str("1")) == u8(0));
}

TEST_CASE("store protocol: ADD counts in decimal text, and refuses a non-number") {
  StoreProtocol p;
  Client c(p);
  CHECK(c.ask(u8(legacy::ADD) + str("n") + i64(0)) == i64(0));  // created at 0 + delta
  CHECK(c.ask(u8(legacy::ADD) + str("n") + i64(-12)) == i64(-12));
  CHECK(c.ask(u8(legacy::GET) + str("n")) == str("-12"));
  CHECK(c.ask(u8(legacy::SET) + str("s") + str("40")).empty());  // a number SET as text
  CHECK(c.ask(u8(legacy::ADD) + str("s") + i64(2)) == i64(42));
  CHECK(c.ask(u8(legacy::SET) + str("big") + str("9223372036854775807")).empty());
  CHECK(c.ask(u8(legacy::ADD) + str("big") + i64(1)) == i64(std::numeric_limits<std::int64_t>::min()));  // wraps, as torch's
  for (const char* bad : {"", "12x", "x", " "}) {
    Client d(p);
    CHECK(d.ask(u8(legacy::SET) + str("bad") + str(bad)).empty());
    CHECK(d.refused(u8(legacy::ADD) + str("bad") + i64(1)) ==
          "ADD to a key whose value is not a number");
  }
  CHECK(c.ask(u8(legacy::GET) + str("bad")) == str(" "));  // unchanged by the refused ADD
}

TEST_CASE("store protocol: COMPARE_SET") {
  StoreProtocol p;
  Client c(p);
  // Missing key: set only when nothing is expected; else torch answers the expected value.
  CHECK(c.ask(u8(legacy::COMPARE_SET) + str("gone") + str("q") + str("z")) == str("q"));
  CHECK(c.ask(u8(legacy::CHECK) + keys({"gone"})) == u8(1));
  CHECK(c.ask(u8(legacy::COMPARE_SET) + str("k") + str("") + str("a")) == str("a"));
  CHECK(c.ask(u8(legacy::COMPARE_SET) + str("k") + str("") + str("b")) == str("a"));  // exists now
  CHECK(c.ask(u8(legacy::COMPARE_SET) + str("k") + str("nope") + str("b")) == str("a"));
  CHECK(c.ask(u8(legacy::COMPARE_SET) + str("k") + str("a") + str("b")) == str("b"));
  CHECK(c.ask(u8(legacy::GET) + str("k")) == str("b"));
  CHECK(c.ask(u8(legacy::COMPARE_SET) + str("k") + str("b") + str("")) == str(""));
}

TEST_CASE("store protocol: a bad query closes its connection with a clear reason") {
  StoreProtocol p;
  const std::string unknown =
      " (not a TCPStore client, or a newer protocol than this agent store serves)";
  CHECK(Client(p).refused(u8(200) + "not a store query") == "unknown query type 200" + unknown);
  CHECK(Client(p).refused(u8(later::PING) + u32(1)) == "unknown query type 13" + unknown);
  CHECK(Client(p).refused(kHello + u8(14)) == "unknown query type 14" + unknown);

  // Sizes are refused as soon as their length arrives, not after 1 TiB.
  CHECK(Client(p).refused(u8(legacy::SET) + u64(1ull << 40)) ==
        "a key or value of 1099511627776 bytes");
  CHECK(Client(p).refused(u8(legacy::SET) + str("k") + u64(StoreProtocol::kMaxItem + 1)) ==
        "a key or value of 1073741825 bytes");
  CHECK(Client(p).ask(u8(legacy::SET) + u64(StoreProtocol::kMaxItem)).empty());  // may come
  CHECK(Client(p).refused(u8(legacy::CHECK) + u64(StoreProtocol::kMaxKeys + 1)) ==
        "a query of 1048577 keys");
  CHECK(Client(p).refused(kHello + u8(later::MULTI_GET) + u64(1ull << 40)) ==
        "a query of 1099511627776 keys");

  // Missing keys: torch's server closes too.
  CHECK(Client(p).refused(u8(legacy::GET) + str("nope")) == "GET of a missing key");
  Client c(p), waiter(p), watcher(p);
  CHECK(c.ask(u8(legacy::SET) + str("k") + str("v")).empty());
  CHECK(c.ask(u8(legacy::MULTI_GET) + keys({"k"})) == str("v"));
  CHECK(c.ask(u8(legacy::WAIT) + keys({"never"})).empty());
  CHECK(watcher.ask(u8(legacy::WATCH_KEY) + str("k2")) == u8(3));
  CHECK(waiter.ask(u8(legacy::WAIT) + keys({"k2"})).empty());
  // In one feed: a SET that wakes another, a GET, then the bad query. The
  // others hear of the SET; the closed one is sent nothing, not even the GET.
  auto o = p.feed(c.id, u8(legacy::SET) + str("k2") + str("v2") + u8(legacy::GET) + str("k") +
                            u8(legacy::MULTI_GET) + keys({"k", "nope"}));
  REQUIRE(o.close);
  CHECK(*o.close == "MULTI_GET of a missing key");
  CHECK(o.to(c.id).empty());
  CHECK(o.to(waiter.id) == u8(0));
  CHECK(o.to(watcher.id) == u8(1) + str("k2") + str("") + str("v2"));
  // Closed: what it sends is ignored, and its WAIT is forgotten.
  o = p.feed(c.id, u8(legacy::GET) + str("k"));
  CHECK((o.sends.empty() && !o.close));
  CHECK(p.feed(waiter.id, u8(legacy::SET) + str("never") + str("1")).sends.empty());
  p.close(c.id);
  CHECK(Client(p).ask(u8(legacy::GET) + str("k2")) == str("v2"));  // the store serves on
}

TEST_CASE("store protocol: VALIDATE and its magic number pick the numbering") {
  StoreProtocol p;
  // VALIDATE arriving in pieces: nothing is decided before the magic is whole.
  Client v(p);
  for (char ch : kHello) CHECK(v.ask(std::string(1, ch)).empty());
  CHECK(v.ask(u8(later::SET) + str("k") + str("v")).empty());  // 1 is SET here
  CHECK(v.ask(u8(later::GET) + str("k")) == str("v"));
  CHECK(v.ask(kHello).empty());  // VALIDATE again, with the right number: fine
  CHECK(v.refused(u8(later::VALIDATE) + u32(0x12345678)) == "a wrong VALIDATE number");

  // A first 0 without the magic is torch 1.x's SET (its key length never looks like it).
  Client old(p);
  CHECK(old.ask(u8(legacy::SET) + str("abc") + str("x")).empty());
  CHECK(old.ask(u8(legacy::COMPARE_SET) + str("abc") + str("x") + str("y")) == str("y"));  // 1
  CHECK(old.ask(u8(legacy::GET) + str("abc")) == str("y"));
  // ... so a wrong magic number first is a SET with an absurd key length.
  CHECK(Client(p).refused(u8(0) + u32(0x12345678) + u32(0x9abcdef0)) ==
        "a key or value of 11150031900141442680 bytes");
}

TEST_CASE("store protocol: clear_keys starts a new round; connections and their WAITs stay") {
  StoreProtocol p;
  Client old(p), waiter(p), fresh(p);
  CHECK(old.ask(u8(legacy::SET) + str("/0/rank_0") + str("127.0.0.1:1234")).empty());
  CHECK(old.ask(u8(legacy::ADD) + str("init/") + i64(1)) == i64(1));
  CHECK(waiter.ask(u8(legacy::WAIT) + keys({"w"})).empty());
  REQUIRE(p.num_keys() == 2);
  p.clear_keys();
  CHECK(p.num_keys() == 0);
  CHECK(fresh.ask(kHello + u8(later::CHECK) + keys({"/0/rank_0"})) == u8(1));  // not ready
  CHECK(fresh.ask(u8(later::ADD) + str("init/") + i64(1)) == i64(1));          // counts anew
  CHECK(old.ask(u8(legacy::GETNUMKEYS)) == i64(1));
  const auto o = p.feed(fresh.id, u8(later::SET) + str("w") + str("1"));
  CHECK(o.to(waiter.id) == u8(0));  // the WAIT from before still ends
}
