#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "profile/step_trace.hpp"
#include "profile/straggler.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;

TEST_CASE("the compute spread: min, median (even counts: the middle two's mean), max, slowest") {
  CHECK(spread_of({}).slowest_rank == -1);
  auto s = spread_of({0.5});
  CHECK(s.min_s == 0.5);
  CHECK(s.median_s == 0.5);
  CHECK(s.max_s == 0.5);
  CHECK(s.slowest_rank == 0);
  s = spread_of({0.3, 0.1, 0.9, 0.2});
  CHECK(s.min_s == 0.1);
  CHECK(s.median_s == Approx(0.25));
  CHECK(s.max_s == 0.9);
  CHECK(s.slowest_rank == 2);
  s = spread_of({0.4, 0.7, 0.7});  // a tie: the lower rank
  CHECK(s.median_s == 0.7);
  CHECK(s.slowest_rank == 1);
}

TEST_CASE("a rank above ratio x median for N logged steps in a row is reported, then every N") {
  StragglerRule rule(1.3, 3);
  const std::vector<double> slow1 = {1.0, 2.0, 1.0, 1.0};  // median 1.0: rank 1 at 2x
  const std::vector<double> even = {1.0, 1.0, 1.0, 1.0};
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  auto w = rule.observe(slow1, spread_of(slow1));
  REQUIRE(w.size() == 1);
  CHECK(w[0].rank == 1);
  CHECK(w[0].compute_s == 2.0);
  CHECK(w[0].consecutive == 3);
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  w = rule.observe(slow1, spread_of(slow1));
  REQUIRE(w.size() == 1);
  CHECK(w[0].consecutive == 6);
  // One step at or below the limit resets the count.
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  CHECK(rule.observe(even, spread_of(even)).empty());
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  CHECK(rule.observe(slow1, spread_of(slow1)).empty());
  CHECK(rule.observe(slow1, spread_of(slow1)).size() == 1);
  // Exactly ratio x median is not above it.
  StragglerRule at_limit(1.5, 1);
  const std::vector<double> edge = {1.0, 1.5, 1.0};
  CHECK(at_limit.observe(edge, spread_of(edge)).empty());
  const std::vector<double> over = {1.0, 1.51, 1.0};
  CHECK(at_limit.observe(over, spread_of(over)).size() == 1);
}

TEST_CASE("the straggler warning names the rank, its host, the times and the run of steps") {
  const auto line = format_straggler_warning({1, 0.512, 10}, "node-a", 0.244, 40);
  CHECK(line ==
        "[straggler] warning: rank 1 (host node-a) computed 0.512 s, 2.10x the median 0.244 s, "
        "on 10 logged steps in a row (step 40)");
}

TEST_CASE("collective seconds add up over the process's threads") {
  const double before = collective_seconds();
  add_collective_seconds(0.25);
  std::thread([] { add_collective_seconds(0.5); }).join();
  CHECK(collective_seconds() - before == Approx(0.75));
}

TEST_CASE("UnitScope nests and restores") {
  CHECK(UnitScope::current() == -1);
  {
    const UnitScope a(2);
    CHECK(UnitScope::current() == 2);
    {
      const UnitScope b(5);
      CHECK(UnitScope::current() == 5);
    }
    CHECK(UnitScope::current() == 2);
  }
  CHECK(UnitScope::current() == -1);
}

TEST_CASE("the step trace records spans only inside its window, as a valid Chrome trace") {
  StepTrace& t = step_trace();
  t.set_window(2, 3);
  for (std::int64_t step = 1; step <= 4; ++step) {
    t.start_step(step);
    {
      const TraceSpan s("step");
      const UnitScope u(1);
      const TraceSpan f("forward");
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    t.end_step();
  }
  {
    const TraceSpan after("step");  // outside any step: not recorded
  }
  const auto events = t.events();
  REQUIRE(events.size() == 4);  // steps 2 and 3, two spans each
  for (const auto& e : events) CHECK((e.step == 2 || e.step == 3));
  CHECK(std::string(events[0].name) == "forward");  // the inner span ends first
  CHECK(events[0].unit == 1);
  CHECK(events[1].unit == -1);
  CHECK(events[0].ts_us >= events[1].ts_us);
  CHECK(events[0].ts_us + events[0].dur_us <= events[1].ts_us + events[1].dur_us);
  CHECK(events[0].dur_us >= 2000);

  const auto j = nlohmann::json::parse(chrome_trace_json(3, "host\"x", events));
  const auto& ev = j.at("traceEvents");
  REQUIRE(ev.size() == 2 + 4);  // process and thread names, then the spans
  CHECK(ev[0].at("ph") == "M");
  CHECK(ev[0].at("args").at("name") == "rank 3 (host host\"x)");
  CHECK(ev[1].at("args").at("name") == "train");
  CHECK(ev[2].at("name") == "forward unit 1");
  CHECK(ev[2].at("ph") == "X");
  CHECK(ev[2].at("pid") == 3);
  CHECK(ev[2].at("tid") == 0);
  CHECK(ev[2].at("args").at("step") == 2);
  CHECK(ev[3].at("name") == "step");
}

TEST_CASE("the trace file lands in DIR as trace-RANK.json; an unwritable DIR is named") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("wireup-trace-test." + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  check_trace_dir(dir / "sub");
  CHECK(std::filesystem::is_directory(dir / "sub"));
  CHECK(std::filesystem::is_empty(dir / "sub"));  // the probe is gone
  const auto path = write_chrome_trace(dir / "sub", 7, "h", {});
  CHECK(path == dir / "sub" / "trace-7.json");
  std::ifstream in(path);
  CHECK(nlohmann::json::parse(in).at("traceEvents").size() == 2);
  std::ofstream(dir / "file") << "x";
  CHECK_THROWS_WITH(check_trace_dir(dir / "file"),
                    Catch::Contains("--profile_dir " + (dir / "file").string()));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a trace keeps at most kMaxEvents spans and counts the rest") {
  StepTrace t;
  t.set_window(1, 1);
  t.start_step(1);
  for (std::size_t i = 0; i < StepTrace::kMaxEvents + 5; ++i) t.add("x", -1, 1, 1);
  t.end_step();
  CHECK(t.events().size() == StepTrace::kMaxEvents);
  CHECK(t.dropped() == 5);
}
