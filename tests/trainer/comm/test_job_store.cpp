// ranks_not_at over a real TCPStore (rank 0's server, a client for the
// waiting rank): who has not reached a collective, and what is left of that
// answer when the server exits during the grace period (rank 0, timing out
// too, ends its process while the others still look).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "comm/job_store.hpp"
#include "comm/collective_deadline.hpp"

// REQUIRE, not CHECK: torch's headers define a CHECK of their own (fatal).
namespace wt = wireup::train;
using namespace std::chrono_literals;

namespace {

// A port the store's server can bind, above the kernel's ephemeral range
// (32768-60999), where no outgoing connection of a test beside this one takes it.
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  const int first = 61000 + static_cast<int>(::getpid() % 4000);
  for (int i = 0; i < 4000; ++i) {
    const int port = 61000 + (first - 61000 + i) % 4000;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      ::close(fd);
      return port;
    }
  }
  ::close(fd);
  FAIL("no free port in 61000-64999");
  return 0;
}

wt::WorldLayout rank_of(int rank, int world, int port) {
  wt::WorldLayout w;
  w.rank = rank;
  w.world = world;
  w.master_port = port;
  return w;
}

void mark(c10d::Store& s, int rank, std::uint64_t n) {
  const std::string v = std::to_string(n);
  s.set("wd/at/" + std::to_string(rank), std::vector<std::uint8_t>(v.begin(), v.end()));
}

}  // namespace

TEST_CASE("ranks_not_at names the ranks behind; the last look stands when the server exits") {
  wt::set_collective_timeout(30s);  // the stores' client timeout: a lost server ends a call
  const int port = free_port();
  auto server = wt::open_job_store(rank_of(0, 3, port));  // rank 0 serves
  auto client = wt::open_job_store(rank_of(1, 3, port));  // rank 1 waits

  SECTION("every rank answers: the one behind is named after the grace") {
    mark(*server, 0, 7);
    REQUIRE(wt::ranks_not_at(*client, "wd/at/", 1, 3, 7, 500ms) == std::vector<int>{2});
  }
  SECTION("a rank arriving within the grace is not named") {
    auto late = std::async(std::launch::async, [&] {
      std::this_thread::sleep_for(300ms);
      mark(*server, 0, 7);
      mark(*server, 2, 8);  // a collective ahead counts as arrived
    });
    REQUIRE(wt::ranks_not_at(*client, "wd/at/", 1, 3, 7, 30s).empty());
    late.get();
  }
  SECTION("the server goes away mid-grace: the answer read before it went") {
    mark(*server, 0, 7);  // rank 0 times out too and marks: every look answers {2}...
    auto asked = std::async(std::launch::async,
                            [&] { return wt::ranks_not_at(*client, "wd/at/", 1, 3, 7, 60s); });
    // Waits (up to 30 s) for rank 1's own mark, its first step, then 2 s: about ten
    // looks at one per 200 ms, where one is all the answer needs.
    bool started = false;
    for (int i = 0; i < 3000 && !started; ++i) {
      started = server->check({"wd/at/1"});
      if (!started) std::this_thread::sleep_for(10ms);
    }
    REQUIRE(started);
    std::this_thread::sleep_for(2s);
    server.reset();  // ...then exits: its store server with it
    REQUIRE(asked.wait_for(90s) == std::future_status::ready);
    REQUIRE(asked.get() == std::vector<int>{2});
  }
}
