#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <csignal>

#include "wireup/launch_output.hpp"
#include "wireup/launch_report.hpp"

using namespace wireup;

TEST_CASE("signal names both ways") {
  CHECK(signal_number("SIGTERM") == SIGTERM);
  CHECK(signal_number("usr2") == SIGUSR2);
  CHECK(signal_number("9") == 9);
  CHECK_FALSE(signal_number("SIGNOPE"));
  CHECK_FALSE(signal_number("0"));
  CHECK(signal_name(SIGKILL) == "SIGKILL");
  CHECK(signal_name(77) == "signal 77");
}

TEST_CASE("exit codes: the worker's own, 128+signal") {
  // Real wait statuses, built as the kernel reports them.
  const int exited3 = 3 << 8, killed9 = SIGKILL;
  CHECK(WIFEXITED(exited3));
  auto e = decode_wait_status(exited3);
  CHECK_FALSE(e.signaled);
  CHECK(launcher_exit_code(e) == 3);
  CHECK(describe_exit(e) == "exit code 3");
  e = decode_wait_status(killed9);
  CHECK(e.signaled);
  CHECK(e.code == 9);
  CHECK(launcher_exit_code(e) == 137);
  CHECK(describe_exit(e) == "SIGKILL");
}

TEST_CASE("torch error.json, as @record writes it") {
  auto r = parse_error_file(R"({"message": {"message": "ValueError: bad batch",
      "extraInfo": {"py_callstack": "Traceback...\n  line 3", "timestamp": "1700000000"}}})");
  REQUIRE(r);
  CHECK(r->message == "ValueError: bad batch");
  CHECK(r->traceback == "Traceback...\n  line 3");
  CHECK(r->timestamp == "1700000000");
  CHECK(parse_error_file(R"({"message": "plain"})")->message == "plain");
  CHECK_FALSE(parse_error_file("not json"));
  CHECK_FALSE(parse_error_file(R"({"other": 1})"));
}

TEST_CASE("the summary names rank, host, code and the log tail") {
  FailureFacts f;
  f.rank = 6;
  f.local_rank = 2;
  f.node_rank = 1;
  f.host = "ip-127-0-0-3";
  f.exit = {false, 3};
  f.log_tail = {"loading", "boom"};
  f.error_file = ErrorFileReport{"RuntimeError: x", "", ""};
  const auto s = format_failure_summary(f);
  CHECK_THAT(s, Catch::Contains("rank:       6 (local rank 2, node rank 1)"));
  CHECK_THAT(s, Catch::Contains("host:       ip-127-0-0-3"));
  CHECK_THAT(s, Catch::Contains("exit code:  3"));
  CHECK_THAT(s, Catch::Contains("error:      RuntimeError: x"));
  CHECK_THAT(s, Catch::Contains("    boom\n"));
  f.exit = {true, SIGSEGV};
  CHECK_THAT(format_failure_summary(f), Catch::Contains("(SIGSEGV), exit code 139"));
}

TEST_CASE("the summary repeats wireup-train's stalled-rank line") {
  FailureFacts f;
  f.exit = {false, 3};
  f.log_tail = {"[train] step=20/100",
                "wireup-train: peer stalled: rank 0 (host a) waited 5.0 s in "
                "all_reduce #9 (group world, 8 bytes); not arrived: rank 1 (host b)",
                "wireup-train[rank 0]: flight record: {}"};
  CHECK_THAT(format_failure_summary(f),
             Catch::Contains("  stalled:    rank 0 (host a) waited 5.0 s in all_reduce #9 (group "
                             "world, 8 bytes); not arrived: rank 1 (host b)\n"));
  f.log_tail = {
      "wireup-train: data stalled: rank 1 (host b) waited 3.0 s for the batch of step "
      "7; reading /d/train-00001.bin at byte 4096"};
  CHECK_THAT(format_failure_summary(f),
             Catch::Contains("  stalled:    data stalled: rank 1 (host b) waited 3.0 s for the "
                             "batch of step 7; reading /d/train-00001.bin at byte 4096\n"));
  f.log_tail = {"wireup-train: checkpoint stalled: rank 0 (host a) waited 3.0 s writing /c/x.tmp"};
  CHECK_THAT(format_failure_summary(f),
             Catch::Contains("  stalled:    checkpoint stalled: rank 0 (host a) waited 3.0 s "
                             "writing /c/x.tmp\n"));
  f.log_tail = {"fatal: x", "wireup-train: something stalled: no"};
  CHECK_THAT(format_failure_summary(f), !Catch::Contains("stalled:    "));
}

TEST_CASE("LineTail keeps the last lines and the partial one") {
  LineTail t(2);
  t.feed("a\nb\nc");
  CHECK(t.lines() == std::vector<std::string>{"a", "b", "c"});
  t.feed("\nd\n");
  CHECK(t.lines() == std::vector<std::string>{"c", "d"});
  LineTail none(0);
  none.feed("x\n");
  CHECK(none.lines().empty());
}

TEST_CASE("LinePrefixer never splits a line between two prefixes") {
  LinePrefixer p("[rank 3]: ");
  CHECK(p.feed("hel") == "");
  CHECK(p.feed("lo\nwor") == "[rank 3]: hello\n");
  CHECK(p.feed("ld\n\n") == "[rank 3]: world\n[rank 3]: \n");
  CHECK(p.feed("tail") == "");
  CHECK(p.flush() == "[rank 3]: tail\n");
  CHECK(p.flush() == "");
}

TEST_CASE("stream routes: console, files, tee, filter") {
  LaunchOptions o;
  auto r = route_stream(o, kStdout, 0);
  CHECK(r.console);
  CHECK_FALSE(r.file);
  o.log_dir = "/tmp/l";
  r = route_stream(o, kStdout, 0);
  CHECK(r.file);
  CHECK_FALSE(r.console);  // files only by default with a log dir
  o.tee = kStderr;
  CHECK(route_stream(o, kStderr, 0).console);
  CHECK_FALSE(route_stream(o, kStdout, 0).console);
  o = LaunchOptions{};
  o.local_ranks_filter = {1};
  CHECK_FALSE(route_stream(o, kStdout, 0).console);
  CHECK(route_stream(o, kStdout, 1).console);
}
