// The job epilog's sweep on real directory trees (tmpfs or whatever TMPDIR is).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "snapshot_sweep.hpp"
#include "sweep_trees.hpp"
#include "wireup/memory_snapshot_owner.hpp"

namespace fs = std::filesystem;
using wireup::spank::describe;
using wireup::spank::sweep_job_snapshots;
using wireup::test::make_tree;
using wireup::test::TempDir;

TEST_CASE("the sweep removes the job's tree and counts what it removed") {
  TempDir t;
  const fs::path root = make_tree(t.path, "77", "77");
  const auto r = sweep_job_snapshots(t.path.string(), "77", ::getuid());
  CHECK(r.found);
  CHECK(r.removed);
  CHECK(r.files == 5);  // two parts, two commit markers, the owner marker
  CHECK(r.bytes == 2000 + wireup::snapshot_owner_text("77", ::getuid()).size());
  CHECK(r.left.empty());
  CHECK(r.stopped.empty());
  CHECK_FALSE(fs::exists(root));
  CHECK_THAT(describe(r, t.path.string(), "77"),
             Catch::StartsWith("removed the memory snapshots " + root.string() + " of job 77"));
}

TEST_CASE("nothing there is not an error, and says nothing") {
  TempDir t;
  const auto r = sweep_job_snapshots(t.path.string(), "5", ::getuid());
  CHECK_FALSE(r.found);
  CHECK(describe(r, t.path.string(), "5").empty());
  CHECK_FALSE(sweep_job_snapshots((t.path / "absent").string(), "5", ::getuid()).found);
}

TEST_CASE("another job's, another user's or an unmarked directory stays") {
  TempDir t;
  const fs::path other = make_tree(t.path, "8", "4242");
  auto r = sweep_job_snapshots(t.path.string(), "8", ::getuid());
  CHECK_FALSE(r.removed);
  REQUIRE(r.left.count() == 1);
  CHECK_THAT(r.left.shown()[0], Catch::Contains("its owner marker names job 4242"));
  CHECK(fs::exists(other / "n0" / "snap-00000004" / "rank-00000.bin"));

  r = sweep_job_snapshots(t.path.string(), "8", ::getuid() + 1);
  CHECK_FALSE(r.removed);
  CHECK_THAT(r.left.shown().at(0), Catch::Contains("not a directory of the job's user"));

  fs::create_directories(t.path / "wireup-9" / "n0");
  r = sweep_job_snapshots(t.path.string(), "9", ::getuid());
  CHECK_FALSE(r.removed);
  CHECK_THAT(r.left.shown().at(0), Catch::Contains("no owner marker"));
  CHECK(fs::exists(t.path / "wireup-9" / "n0"));
}

TEST_CASE("symlinks are never followed, at the top or inside") {
  TempDir t;
  const fs::path target = make_tree(t.path / "elsewhere", "3", "3");
  fs::create_directory_symlink(target, t.path / "wireup-3");
  auto r = sweep_job_snapshots(t.path.string(), "3", ::getuid());
  CHECK_FALSE(r.removed);
  CHECK_THAT(r.left.shown().at(0), Catch::Contains("a symlink, never followed"));
  CHECK(fs::exists(target / "owner"));

  // Inside the job's own tree a symlink is removed as a name; what it points to stays.
  const fs::path root = make_tree(t.path, "4", "4");
  fs::create_directory_symlink(target, root / "n0" / "link");
  r = sweep_job_snapshots(t.path.string(), "4", ::getuid());
  CHECK(r.removed);
  CHECK(fs::exists(target / "n1" / "snap-00000004" / "rank-00000.bin"));
}

TEST_CASE("a tree deeper than a snapshot's stays, named") {
  TempDir t;
  const fs::path root = make_tree(t.path, "6", "6");
  fs::create_directories(root / "n0" / "a" / "b" / "c" / "d");
  const auto r = sweep_job_snapshots(t.path.string(), "6", ::getuid());
  CHECK_FALSE(r.removed);
  REQUIRE(r.left.count() == 1);
  CHECK_THAT(r.left.shown()[0], Catch::Contains("n0/a/b/c/d: deeper than a snapshot tree goes"));
  CHECK_FALSE(fs::exists(root / "n1"));  // the rest went
  CHECK(fs::exists(root / "owner"));     // and the marker stays while anything does
}

TEST_CASE("the owner marker round-trips and rejects anything else") {
  const std::string text = wireup::snapshot_owner_text("123", 1000);
  CHECK(text == "wireup-memory-snapshot-owner 1\njob 123\nuid 1000\n");
  const auto o = wireup::parse_snapshot_owner(text);
  REQUIRE(o);
  CHECK(o->job == "123");
  CHECK(o->uid == "1000");
  CHECK_FALSE(wireup::parse_snapshot_owner("wireup-memory-snapshot-owner 1\njob 123\n"));
  CHECK_FALSE(wireup::parse_snapshot_owner(text + "extra\n"));
  CHECK_FALSE(wireup::parse_snapshot_owner("something else\njob 1\nuid 0\n"));
  CHECK(o->maker == wireup::SnapshotDirMaker::trainer);
  // The job prolog's marker says so on a line of its own; nothing else may stand there.
  const std::string prolog =
      wireup::snapshot_owner_text("123", 1000, wireup::SnapshotDirMaker::prolog);
  CHECK(prolog == text + "made_by prolog\n");
  const auto p = wireup::parse_snapshot_owner(prolog);
  REQUIRE(p);
  CHECK(p->job == "123");
  CHECK(p->uid == "1000");
  CHECK(p->maker == wireup::SnapshotDirMaker::prolog);
  CHECK_FALSE(wireup::parse_snapshot_owner(text + "made_by trainer\n"));
  CHECK_FALSE(wireup::parse_snapshot_owner(prolog + "made_by prolog\n"));
  CHECK_FALSE(wireup::parse_snapshot_owner(text + "made_by prolog"));  // no final newline
  CHECK(wireup::snapshot_dir_name_for_job("55") == "wireup-55");
}
