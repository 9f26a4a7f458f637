// The job epilog's sweep against a job's user who builds the tree to attack it: the
// marker as a symlink, a hard link, a FIFO, a device node or a huge file; links,
// FIFOs and sockets inside; mode 000; names with control bytes; a parent anyone can
// swap things in. Each case as root (the epilog's user), where the tree is made.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>

#include "snapshot_sweep.hpp"
#include "sweep_trees.hpp"

namespace fs = std::filesystem;
using wireup::spank::describe;
using wireup::spank::sweep_job_snapshots;
using wireup::test::make_tree;
using wireup::test::TempDir;
using wireup::test::write;

namespace {

bool as_root() {
  if (::geteuid() == 0) return true;
  WARN("skipped: needs root (mknod, chown, another user's files), as slurmd's epilog runs");
  return false;
}

// The tree with its marker replaced by `make(marker)`: the sweep must leave all of it,
// never open the marker, and say why.
void marker_refused(const std::function<void(const fs::path&)>& make, const std::string& why) {
  TempDir t;
  const fs::path root = make_tree(t.path, "21", "21");
  const fs::path marker = root / "owner";
  fs::remove(marker);
  make(marker);
  const auto r = sweep_job_snapshots(t.path.string(), "21", ::getuid());
  CHECK_FALSE(r.removed);
  CHECK(r.files == 0);
  REQUIRE(r.left.count() == 1);
  CHECK_THAT(r.left.shown()[0], Catch::Contains(why));
  CHECK(fs::exists(root / "n0" / "snap-00000004" / "rank-00000.bin"));
}

}  // namespace

TEST_CASE("a marker that is not a small regular file of the user with one link is never opened") {
  if (!as_root()) return;
  TempDir other;
  const fs::path elsewhere = other.path / "marker";
  write(elsewhere, wireup::snapshot_owner_text("21", ::getuid()));
  SECTION("a symlink to a marker that names the job") {
    marker_refused([&](const fs::path& m) { fs::create_symlink(elsewhere, m); },
                   "the owner marker is a symlink, not followed");
  }
  SECTION("a hard link to a marker that names the job") {
    marker_refused([&](const fs::path& m) { fs::create_hard_link(elsewhere, m); },
                   "the owner marker has 2 hard links, not read");
  }
  SECTION("a FIFO: opening it would block the epilog") {
    marker_refused([](const fs::path& m) { REQUIRE(::mkfifo(m.c_str(), 0600) == 0); },
                   "the owner marker is a FIFO, not opened");
  }
  SECTION("a device node: opening it could act on a device") {
    marker_refused(
        [](const fs::path& m) { REQUIRE(::mknod(m.c_str(), S_IFCHR | 0600, makedev(1, 3)) == 0); },
        "the owner marker is a device node, not opened");
  }
  SECTION("a huge sparse file: reading it would fill root's memory") {
    marker_refused(
        [](const fs::path& m) {
          write(m, wireup::snapshot_owner_text("21", ::getuid()));
          fs::resize_file(m, std::uintmax_t{1} << 34);
        },
        "the owner marker is 17179869184 bytes (at most 4096), not read");
  }
  SECTION("another user's") {
    marker_refused(
        [](const fs::path& m) {
          write(m, wireup::snapshot_owner_text("21", ::getuid()));
          REQUIRE(::chown(m.c_str(), 65534, 65534) == 0);
        },
        "the owner marker is owned by uid 65534");
  }
}

TEST_CASE(
    "links, FIFOs, sockets and mode 000 inside the tree go as names; what they point to stays") {
  if (!as_root()) return;
  TempDir t;
  TempDir other;
  const fs::path outside = other.path / "precious";
  write(outside, "keep me");
  const fs::path root = make_tree(t.path, "22", "22");
  fs::create_hard_link(outside, root / "n0" / "hardlink");
  REQUIRE(::mkfifo((root / "n0" / "fifo").c_str(), 0600) == 0);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(s >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = (root / "n1" / "sock").string();
  REQUIRE(sock.size() < sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  REQUIRE(::bind(s, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  ::close(s);
  fs::create_directories(root / "n1" / "locked" / "inner");
  write(root / "n1" / "locked" / "inner" / "part", "x");
  REQUIRE(::chmod((root / "n1" / "locked" / "inner" / "part").c_str(), 0) == 0);
  REQUIRE(::chmod((root / "n1" / "locked" / "inner").c_str(), 0) == 0);
  REQUIRE(::chmod((root / "n1" / "locked").c_str(), 0) == 0);

  const auto r = sweep_job_snapshots(t.path.string(), "22", ::getuid());
  CHECK(r.removed);
  CHECK(r.left.empty());
  CHECK_FALSE(fs::exists(root));
  CHECK(fs::hard_link_count(outside) == 1);
  std::ifstream in(outside);
  std::string text;
  std::getline(in, text);
  CHECK(text == "keep me");
}

TEST_CASE("names and marker text with control bytes reach the log escaped, on one line") {
  if (!as_root()) return;
  TempDir t;
  const fs::path root = make_tree(t.path, "23", "23");
  const fs::path forged = root / "n0" / "x\nspank_wireup: removed the memory snapshots\r\x1b[2K";
  write(forged, "");
  REQUIRE(::chown(forged.c_str(), 65534, 65534) == 0);
  auto r = sweep_job_snapshots(t.path.string(), "23", ::getuid());
  CHECK_FALSE(r.removed);
  std::string line = describe(r, t.path.string(), "23");
  CHECK_THAT(line,
             Catch::Contains("n0/x\\nspank_wireup: removed the memory snapshots\\r\\x1b[2K: owned "
                             "by uid 65534"));
  CHECK(line.find_first_of("\n\r\x1b") == std::string::npos);

  const fs::path other = make_tree(t.path, "24", "24\x1b]0;owned\x07\r");
  r = sweep_job_snapshots(t.path.string(), "24", ::getuid());
  line = describe(r, t.path.string(), "24");
  CHECK_THAT(line, Catch::Contains("its owner marker names job 24\\x1b]0;owned\\x07\\r"));
  CHECK(line.find_first_of("\n\r\x1b\x07") == std::string::npos);
  CHECK(fs::exists(other / "owner"));
}

TEST_CASE("a parent that is neither root's nor sticky, or a symlink, is never swept") {
  if (!as_root()) return;
  TempDir t;
  const fs::path parent = t.path / "users";
  fs::create_directory(parent);
  const fs::path root = make_tree(parent, "25", "25");
  REQUIRE(::chown(parent.c_str(), 65534, 65534) == 0);
  REQUIRE(::chmod(parent.c_str(), 0755) == 0);
  auto r = sweep_job_snapshots(parent.string(), "25", ::getuid());
  CHECK_FALSE(r.removed);
  CHECK_THAT(r.left.shown().at(0),
             Catch::Contains("owned by uid 65534 and not sticky (mode 0755), so never swept"));
  CHECK(fs::exists(root / "owner"));

  fs::create_directory_symlink(parent, t.path / "link");
  r = sweep_job_snapshots((t.path / "link").string(), "25", ::getuid());
  CHECK_FALSE(r.removed);
  CHECK_THAT(r.left.shown().at(0),
             Catch::Contains("a symlink or not a directory in its path, never followed"));
  fs::create_directory(t.path / "real");
  fs::create_directory_symlink(t.path / "real", t.path / "midlink");
  make_tree(t.path / "real", "26", "26");
  r = sweep_job_snapshots((t.path / "midlink").string() + "/.", "26", ::getuid());
  CHECK_FALSE(r.removed);  // a symlink anywhere in the path, not only at its end
  CHECK(fs::exists(t.path / "real" / "wireup-26" / "owner"));
}
