#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "watchdog/flight_recorder.hpp"
#include "watchdog/stall_watch.hpp"

using namespace wireup::train;
using namespace std::chrono_literals;

TEST_CASE("the I/O stall line names the kind, the rank, its host, the wait and the file") {
  CHECK(format_io_stall_line("data", 1, "node-a", 5.04,
                             "for the batch of step 12; reading /d/s.bin at byte 4096") ==
        "wireup-train: data stalled: rank 1 (host node-a) waited 5.0 s for the batch of step 12; "
        "reading /d/s.bin at byte 4096");
}

namespace {
// Runs `body` in a child process; its exit status and what it wrote on stderr.
std::pair<int, std::string> in_child(void (*body)()) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(fds[1], 2);
    ::close(fds[0]);
    body();
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string err;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) err.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}
}  // namespace

TEST_CASE("a wait past its deadline ends the process with exit 3 and its line") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [rc, err] = in_child([] {
    stall_watch().set_place(4, "h");
    const StallDeadline never_ends("data", 200ms, [] { return std::string("for the batch"); });
    std::this_thread::sleep_for(30s);
  });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(rc == kExitPeerStalled);
  CHECK(took < 10);
  CHECK_THAT(err, Catch::StartsWith("wireup-train: data stalled: rank 4 (host h) waited "));
  CHECK_THAT(err, Catch::Contains(" s for the batch\n"));
  // The wait it names: at least the deadline (a loaded machine may wake late).
  const double waited = std::stod(err.substr(err.find(" waited ") + 8));
  CHECK(waited >= 0.2);
  CHECK(waited < 10);
}

TEST_CASE("waits that end in time, nested or one after another, end nothing") {
  // 60 s deadlines around waits of none and 100 ms: a loaded machine may
  // oversleep, but not by a minute.
  const auto [rc, err] = in_child([] {
    for (int i = 0; i < 200; ++i) {
      const StallDeadline outer("checkpoint", 60s, [] { return std::string("outer"); });
      const StallDeadline inner("data", 60s, [] { return std::string("inner"); });
    }
    const StallDeadline a("data", 60s, [] { return std::string("a"); });
    std::this_thread::sleep_for(100ms);
  });
  CHECK(rc == 0);
  CHECK(err.empty());
}

TEST_CASE("a shorter wait armed after a longer one still ends the process in its time") {
  const auto t0 = std::chrono::steady_clock::now();
  const auto [rc, err] = in_child([] {
    stall_watch().set_place(0, "h");
    {
      const StallDeadline long_one("data", 60s, [] { return std::string("long"); });
    }  // the thread now sleeps until the disarmed minute
    const StallDeadline short_one("checkpoint", 200ms, [] { return std::string("writing x"); });
    std::this_thread::sleep_for(30s);
  });
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(rc == kExitPeerStalled);
  CHECK(took < 10);
  CHECK_THAT(err, Catch::Contains("checkpoint stalled: rank 0 (host h)"));
  CHECK_THAT(err, Catch::Contains(" s writing x\n"));
}
