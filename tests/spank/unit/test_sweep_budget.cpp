// The job epilog sweep's bounds as plain logic: the budget, the visited set, the log.
#include <catch2/catch.hpp>
#include <string>

#include "wireup/settings.hpp"
#include "wireup/sweep_budget.hpp"

using wireup::LeftLog;
using wireup::SweepBudget;
using wireup::SweepLimits;
using wireup::SweepStop;
using wireup::VisitedDirs;

namespace {
constexpr std::uint64_t kSecond = 1000000000u;
}

TEST_CASE("the budget stops at its entries and stays stopped") {
  SweepBudget b(SweepLimits{3, 1000, 60}, 0);
  CHECK(b.take(10, 1));
  CHECK(b.take(10, 2));
  CHECK(b.take(10, 3));
  CHECK_FALSE(b.take(1, 4));
  CHECK(b.stopped() == SweepStop::Entries);
  CHECK(b.entries() == 3);
  CHECK(b.name_bytes() == 30);
  CHECK_THAT(b.reason(), Catch::Contains("3 entries (memory_snapshot_max_entries)"));
  CHECK_FALSE(b.take(1, 5));
  // What was paid for is still worked through while time is left.
  CHECK(b.time_left(6));
}

TEST_CASE("the budget stops at its bytes of names") {
  SweepBudget b(SweepLimits{100, 25, 60}, 0);
  CHECK(b.take(20, 0));
  CHECK_FALSE(b.take(6, 0));
  CHECK(b.stopped() == SweepStop::NameBytes);
  CHECK(b.name_bytes() == 20);
  CHECK_THAT(b.reason(), Catch::Contains("25 bytes of names (memory_snapshot_max_name_bytes)"));
}

TEST_CASE("the budget stops at its seconds, counted from the start") {
  SweepBudget b(SweepLimits{100, 1000, 2}, 10 * kSecond);
  CHECK(b.take(1, 11 * kSecond));
  CHECK(b.time_left(12 * kSecond - 1));
  CHECK_FALSE(b.time_left(12 * kSecond));
  CHECK(b.stopped() == SweepStop::Seconds);
  CHECK_FALSE(b.take(1, 12 * kSecond));
  CHECK_THAT(b.reason(), Catch::Contains("2 seconds (memory_snapshot_max_seconds)"));
  SweepBudget clock_back(SweepLimits{}, 50 * kSecond);
  CHECK(clock_back.take(1, 0));  // a clock before the start counts as no time spent
}

TEST_CASE("the visited set tells a directory seen before, and is bounded") {
  VisitedDirs v(3);
  CHECK(v.insert(1, 10) == VisitedDirs::Insert::New);
  CHECK(v.insert(1, 11) == VisitedDirs::Insert::New);
  CHECK(v.insert(2, 10) == VisitedDirs::Insert::New);  // another device, same inode number
  CHECK(v.insert(1, 10) == VisitedDirs::Insert::Seen);
  CHECK(v.insert(1, 12) == VisitedDirs::Insert::Full);
  CHECK(v.insert(2, 10) == VisitedDirs::Insert::Seen);  // still told when full
  CHECK(v.size() == 3);
  SweepBudget b(SweepLimits{}, 0);
  b.stop_for_directories();
  CHECK_THAT(b.reason(), Catch::Contains("directories"));
}

TEST_CASE("what was left is counted, and only the first few kept, escaped and cut") {
  LeftLog left;
  CHECK(left.empty());
  for (int i = 0; i < 100000; ++i) left.add("/d/n" + std::to_string(i), "why");
  CHECK(left.count() == 100000);
  REQUIRE(left.shown().size() == LeftLog::kShown);
  CHECK(left.shown()[0] == "/d/n0: why");

  LeftLog forged;
  forged.add("/d/a\nspank_wireup: removed\r\x1b[2K", "owned by uid 0");
  CHECK(forged.shown()[0] == "/d/a\\nspank_wireup: removed\\r\\x1b[2K: owned by uid 0");
  LeftLog longer;
  longer.add(std::string(5000, 'x'), "why");
  CHECK(longer.shown()[0] == std::string(256, 'x') + "...: why");
  CHECK(wireup::shown_text("job\x07", 64) == "job\\x07");
}

TEST_CASE("plugstack.conf sets the sweep's budget, within bounds") {
  const SweepLimits defaults;
  CHECK(defaults.entries == 100000);
  CHECK(defaults.name_bytes == 8u << 20);
  CHECK(defaults.seconds == 60);
  const auto cfg = wireup::parse_admin_args({"memory_snapshot_max_entries=5000",
                                             "memory_snapshot_max_name_bytes=65536",
                                             "memory_snapshot_max_seconds=5"});
  CHECK(cfg.memory_snapshot_limits.entries == 5000);
  CHECK(cfg.memory_snapshot_limits.name_bytes == 65536);
  CHECK(cfg.memory_snapshot_limits.seconds == 5);
  for (const char* bad : {"memory_snapshot_max_entries=0", "memory_snapshot_max_entries=-1",
                          "memory_snapshot_max_name_bytes=100", "memory_snapshot_max_seconds=0",
                          "memory_snapshot_max_seconds=3601", "memory_snapshot_max_seconds=5s"}) {
    INFO(bad);
    CHECK_THROWS_WITH(wireup::parse_admin_args({bad}),
                      Catch::Contains(std::string(bad).substr(0, std::string(bad).find('='))) &&
                          Catch::Contains("a whole number"));
  }
}
