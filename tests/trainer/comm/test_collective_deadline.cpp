// The deadline every collective waits under (comm/collective_deadline.hpp): one
// value for the process, a scope that puts back the one before it however it
// ends, and the stall a backend throws when it passes.
#include <catch2/catch.hpp>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "comm/collective_deadline.hpp"

using namespace wireup::train;
using std::chrono::milliseconds;

TEST_CASE("the collective timeout is one value for the whole process") {
  const auto before = collective_timeout();
  set_collective_timeout(milliseconds(5000));
  milliseconds seen{0};
  std::thread([&] { seen = collective_timeout(); }).join();
  CHECK(seen == milliseconds(5000));
  set_collective_timeout(before);
}

TEST_CASE("a timeout scope puts back the timeout before it, also when unwinding") {
  const auto before = collective_timeout();
  set_collective_timeout(milliseconds(7000));
  {
    const CollectiveTimeoutScope storage(milliseconds(90000));
    CHECK(collective_timeout() == milliseconds(90000));
    {
      const CollectiveTimeoutScope inner(milliseconds(1));
      CHECK(collective_timeout() == milliseconds(1));
    }
    CHECK(collective_timeout() == milliseconds(90000));
  }
  CHECK(collective_timeout() == milliseconds(7000));
  try {
    const CollectiveTimeoutScope storage(milliseconds(3));
    throw std::runtime_error("save failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(collective_timeout() == milliseconds(7000));
  set_collective_timeout(before);
}

TEST_CASE("a stall names the ranks that did not arrive and how long it waited") {
  try {
    throw PeerStalled({1, 3}, 5.5, "all_reduce: ranks 1 3 missing");
  } catch (const std::runtime_error& e) {  // caught as any backend error is
    const auto* stall = dynamic_cast<const PeerStalled*>(&e);
    REQUIRE(stall != nullptr);
    CHECK(stall->missing == std::vector<int>{1, 3});
    CHECK(stall->waited_s == 5.5);
    CHECK(std::string(e.what()) == "all_reduce: ranks 1 3 missing");
  }
}
