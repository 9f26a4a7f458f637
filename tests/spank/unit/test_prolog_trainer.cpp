// The directory the plugin's job prolog makes is the trainer's own: wireup-train's
// claim_root, run as the job's user (uid 4242 here, in a child process), accepts it
// and its marker as if it had made them, and writes nothing over them. As root.
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "checkpoint/memory_snapshot_dir.hpp"
#include "snapshot_prolog.hpp"
#include "sweep_trees.hpp"

namespace fs = std::filesystem;

namespace {

// `body` as uid:gid in a child process: its exit code (0 when it did not throw).
template <typename F>
int as_user(uid_t uid, gid_t gid, F&& body) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0) ::_exit(3);
    try {
      body();
      ::_exit(0);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "as uid %u: %s\n", static_cast<unsigned>(uid), e.what());
      ::_exit(1);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

}  // namespace

TEST_CASE("wireup-train accepts the directory the job prolog made for its user") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root (the prolog's chown, the child's setuid)");
    return;
  }
  wireup::test::TempDir t;
  const auto r = wireup::spank::prepare_job_snapshot_dir(t.path.string(), "51", 4242, 4343);
  REQUIRE(r.created);
  const fs::path root = t.path / "wireup-51";
  const auto marker_before = fs::last_write_time(root / "owner");
  CHECK(as_user(4242, 4343, [&] {
          wireup::train::claim_default_root(root, "51");
          if (!wireup::train::check_root_owner(root, "51")) throw std::runtime_error("no marker");
          wireup::train::open_private_dir(root / "n0");  // the first snapshot's node directory
        }) == 0);
  CHECK(fs::last_write_time(root / "owner") == marker_before);  // accepted, not rewritten
  // Another user is refused it, as any directory not its own.
  CHECK(as_user(4343, 4343, [&] { wireup::train::claim_default_root(root, "51"); }) == 1);
}
