// The directory the plugin's job prolog makes is the trainer's own: wireup-train's
// claim_root, run as the job's user (uid 4242 here, in a child process), accepts it
// and its marker as if it had made them, and writes nothing over them. At a successful
// end, wireup-train removes what it wrote in it and leaves the directory (0700, the
// user's, only the marker) for the job's epilog, which removes it. As root.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "checkpoint/memory_snapshot_dir.hpp"
#include "snapshot_prolog.hpp"
#include "snapshot_sweep.hpp"
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

TEST_CASE("a run's success leaves the prolog's directory for the epilog, emptied of snapshots") {
  if (::geteuid() != 0) {
    WARN("skipped: needs root (the prolog's chown, the child's setuid)");
    return;
  }
  wireup::test::TempDir t;
  REQUIRE(wireup::spank::prepare_job_snapshot_dir(t.path.string(), "52", 4242, 4343).created);
  const fs::path root = t.path / "wireup-52";
  // The job's user: a run claims it and writes a snapshot of node n0 (a part, a
  // replica, manifest, complete), then succeeds and removes what it wrote.
  CHECK(as_user(4242, 4343, [&] {
          wireup::train::claim_default_root(root, "52");
          const fs::path snap = root / "n0" / wireup::train::snapshot_dir_name(5);
          wireup::train::open_private_dir(root / "n0");
          wireup::train::open_private_dir(snap);
          for (const char* f : {"rank-00000.bin", "replica-rank-00001.bin", "manifest", "complete"})
            wireup::train::write_private_file(snap / f, "x", 1);
          const auto left = wireup::train::remove_snapshot_dir(root, "n0", "52");
          if (!left.empty()) throw std::runtime_error("left " + left[0]);
        }) == 0);
  // DIR stays: a directory of the job's user, 0700, holding only the prolog's marker, so
  // that no other user can take its name before the job's next srun.
  struct stat st {};
  REQUIRE(::lstat(root.c_str(), &st) == 0);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(st.st_uid == 4242);
  CHECK((st.st_mode & 07777) == 0700);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root)) names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"owner"});
  // The job's next srun takes it again as its own.
  CHECK(as_user(4242, 4343, [&] { wireup::train::claim_default_root(root, "52"); }) == 0);
  // The job's epilog removes it.
  const auto swept = wireup::spank::sweep_job_snapshots(t.path.string(), "52", 4242);
  CHECK(swept.found);
  CHECK(swept.removed);
  CHECK_FALSE(fs::exists(root));
}

TEST_CASE("a directory wireup-train made itself is removed at its success, as before") {
  wireup::test::TempDir t;
  const fs::path root = t.path / "wireup-53";
  wireup::train::claim_root(root, "53");  // makes it: no prolog here
  wireup::train::open_private_dir(root / "n0");
  wireup::train::open_private_dir(root / "n0" / wireup::train::snapshot_dir_name(5));
  CHECK(wireup::train::remove_snapshot_dir(root, "n0", "53").empty());
  CHECK_FALSE(fs::exists(root));
}
