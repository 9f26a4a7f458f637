// The job prolog's memory snapshot directory (DIR/wireup-JOBID) against a user who
// took that predictable name first: another user's directory, a symlink, a file, the
// job user's own directory with another mode or marker. As root, as slurmd runs the
// prolog, on real trees; the job's user is uid 4242, the squatter nobody (65534).
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "snapshot_prolog.hpp"
#include "snapshot_sweep.hpp"
#include "sweep_trees.hpp"
#include "wireup/memory_snapshot_owner.hpp"
#include "wireup/snapshot_claim.hpp"

namespace fs = std::filesystem;
using wireup::FoundEntry;
using wireup::spank::describe;
using wireup::spank::describe_moved_aside;
using wireup::spank::prepare_job_snapshot_dir;
using wireup::spank::sweep_moved_aside;
using wireup::test::TempDir;
using wireup::test::write;

namespace {

constexpr uid_t kUser = 4242;
constexpr gid_t kGroup = 4343;
constexpr uid_t kNobody = 65534;

bool as_root() {
  if (::geteuid() == 0) return true;
  WARN("skipped: needs root (chown to the job's user and to nobody), as slurmd's prolog runs");
  return false;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct stat lstat_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st;
}

// The secure end state every case must reach: PARENT/wireup-JOB a real directory of
// the job's user and group, exactly 0700, holding only its owner marker (0600, the
// user's, one link, naming the job and user as wireup-train writes it, and that the
// prolog made it).
void check_job_dir(const fs::path& parent, const std::string& job) {
  const fs::path dir = parent / wireup::snapshot_dir_name_for_job(job);
  const struct stat st = lstat_of(dir);
  CHECK(S_ISDIR(st.st_mode));
  CHECK(st.st_uid == kUser);
  CHECK(st.st_gid == kGroup);
  CHECK((st.st_mode & 07777) == 0700);
  const struct stat m = lstat_of(dir / "owner");
  CHECK(S_ISREG(m.st_mode));
  CHECK(m.st_uid == kUser);
  CHECK(m.st_nlink == 1);
  CHECK((m.st_mode & 07777) == 0600);
  CHECK(read(dir / "owner") ==
        wireup::snapshot_owner_text(job, kUser, wireup::SnapshotDirMaker::prolog));
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
}

// The prolog's work directories left in PARENT (what was moved aside).
std::vector<fs::path> work_dirs(const fs::path& parent, const std::string& job) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(parent))
    if (wireup::is_prolog_work_dir_name(e.path().filename().string(), job)) out.push_back(e.path());
  return out;
}

// After the prolog moved a squatter's entry aside: one root-owned 0700 work directory
// holds it as moved-0; the job's epilog then removes it and the work directory.
fs::path moved_entry(const fs::path& parent, const std::string& job) {
  const auto dirs = work_dirs(parent, job);
  REQUIRE(dirs.size() == 1);
  const struct stat w = lstat_of(dirs[0]);
  CHECK(w.st_uid == 0);
  CHECK((w.st_mode & 07777) == 0700);
  return dirs[0] / "moved-0";
}

void epilog_removes_moved(const fs::path& parent, const std::string& job) {
  const auto r = sweep_moved_aside(parent.string(), job, kUser);
  CHECK(r.found);
  CHECK(r.removed);
  CHECK(r.left.empty());
  CHECK_THAT(describe_moved_aside(r, parent.string(), job),
             Catch::StartsWith("removed what the job prolog moved aside in "));
  CHECK(work_dirs(parent, job).empty());
}

}  // namespace

TEST_CASE("the prolog's rules: only the exact private directory is kept") {
  FoundEntry e;
  e.kind = FoundEntry::Kind::Directory;
  e.uid = kUser;
  e.mode = 0700;
  CHECK(wireup::squat_reason(e, kUser).empty());
  e.marker_problem = "its owner marker names job 7";
  CHECK(wireup::squat_reason(e, kUser) == "its owner marker names job 7");
  e.marker_problem.clear();
  e.mode = 0755;
  CHECK(wireup::squat_reason(e, kUser) == "mode 0755, not 0700");
  e.uid = kNobody;
  CHECK(wireup::squat_reason(e, kUser) ==
        "a directory of uid 65534, not the job's user (uid 4242)");
  e.kind = FoundEntry::Kind::Symlink;
  CHECK(wireup::squat_reason(e, kUser) == "a symlink, never followed");
  e.kind = FoundEntry::Kind::Other;
  CHECK(wireup::squat_reason(e, kUser) == "a file or other non-directory");
}

TEST_CASE("the prolog's work directory names are not predictable and only its job's match") {
  const std::string a = wireup::prolog_work_dir_name("41", 0x0123456789abcdefULL);
  CHECK(a == ".wireup-prolog-41-0123456789abcdef");
  CHECK(wireup::is_prolog_work_dir_name(a, "41"));
  CHECK_FALSE(wireup::is_prolog_work_dir_name(a, "4"));
  CHECK_FALSE(wireup::is_prolog_work_dir_name(a, "411"));
  CHECK_FALSE(wireup::is_prolog_work_dir_name(".wireup-prolog-41-0123456789ABCDEF", "41"));
  CHECK_FALSE(wireup::is_prolog_work_dir_name(".wireup-prolog-41-0123", "41"));
  CHECK_FALSE(wireup::is_prolog_work_dir_name("wireup-41", "41"));
  CHECK(wireup::moved_entry_name(2) == "moved-2");
}

TEST_CASE("the prolog makes the job's directory for its user, private, with the marker") {
  if (!as_root()) return;
  TempDir t;
  const auto r = prepare_job_snapshot_dir(t.path.string(), "31", kUser, kGroup);
  CHECK(r.created);
  CHECK(r.error.empty());
  CHECK(r.moved.empty());
  CHECK(describe(r, t.path.string(), "31").empty());  // nothing to log
  check_job_dir(t.path, "31");
  CHECK(work_dirs(t.path, "31").empty());  // no work directory stays
  // The epilog then removes it as it removes what wireup-train leaves.
  const auto s = wireup::spank::sweep_job_snapshots(t.path.string(), "31", kUser);
  CHECK(s.removed);
  CHECK(sweep_moved_aside(t.path.string(), "31", kUser).found == false);
}

TEST_CASE("a squatter's directory is moved aside unchanged, never chowned or entered") {
  if (!as_root()) return;
  TempDir t;
  const fs::path squat = t.path / "wireup-32";
  fs::create_directory(squat);
  write(squat / "owner", wireup::snapshot_owner_text("32", kNobody));
  write(squat / "data", "the squatter's");
  for (const fs::path& p : {squat / "owner", squat / "data", squat})
    REQUIRE(::chown(p.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(squat.c_str(), 0700) == 0);
  const struct stat before = lstat_of(squat);

  const auto r = prepare_job_snapshot_dir(t.path.string(), "32", kUser, kGroup);
  CHECK(r.created);
  CHECK(r.error.empty());
  const std::string line = describe(r, t.path.string(), "32");
  CHECK_THAT(line, Catch::Contains("made for the job's user; moved aside what held the name (a "
                                   "directory of uid 65534, not the job's user (uid 4242)) to "));
  check_job_dir(t.path, "32");
  const fs::path moved = moved_entry(t.path, "32");
  const struct stat after = lstat_of(moved);
  CHECK(after.st_ino == before.st_ino);  // the same directory, its owner and mode as they were
  CHECK(after.st_uid == kNobody);
  CHECK((after.st_mode & 07777) == 0700);
  CHECK(read(moved / "data") == "the squatter's");
  CHECK(lstat_of(moved / "data").st_uid == kNobody);
  epilog_removes_moved(t.path, "32");
}

TEST_CASE("a squatter's symlink is moved aside, its target never followed or changed") {
  if (!as_root()) return;
  TempDir t;
  TempDir elsewhere;
  const fs::path target = elsewhere.path / "victim";
  fs::create_directory(target);
  write(target / "keep", "not the prolog's");
  REQUIRE(::chown(target.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(target.c_str(), 0755) == 0);
  fs::create_directory_symlink(target, t.path / "wireup-33");
  REQUIRE(::lchown((t.path / "wireup-33").c_str(), kNobody, kNobody) == 0);

  const auto r = prepare_job_snapshot_dir(t.path.string(), "33", kUser, kGroup);
  CHECK(r.created);
  CHECK_THAT(describe(r, t.path.string(), "33"),
             Catch::Contains("moved aside what held the name (a symlink, never followed) to "));
  check_job_dir(t.path, "33");
  CHECK(fs::is_symlink(moved_entry(t.path, "33")));
  // The target: not chowned, not chmodded, nothing made or removed in it.
  const struct stat st = lstat_of(target);
  CHECK(st.st_uid == kNobody);
  CHECK((st.st_mode & 07777) == 0755);
  CHECK(read(target / "keep") == "not the prolog's");
  CHECK(std::distance(fs::directory_iterator(target), fs::directory_iterator()) == 1);
  epilog_removes_moved(t.path, "33");
  CHECK(read(target / "keep") == "not the prolog's");  // the epilog unlinks the link only
}

TEST_CASE("a squatter's file is moved aside unchanged") {
  if (!as_root()) return;
  TempDir t;
  write(t.path / "wireup-34", "a file, not a directory");
  REQUIRE(::chown((t.path / "wireup-34").c_str(), kNobody, kNobody) == 0);
  const auto r = prepare_job_snapshot_dir(t.path.string(), "34", kUser, kGroup);
  CHECK(r.created);
  CHECK_THAT(describe(r, t.path.string(), "34"),
             Catch::Contains("(a file or other non-directory) to "));
  check_job_dir(t.path, "34");
  const fs::path moved = moved_entry(t.path, "34");
  CHECK(read(moved) == "a file, not a directory");
  CHECK(lstat_of(moved).st_uid == kNobody);
  epilog_removes_moved(t.path, "34");
}

TEST_CASE("the job user's own directory with another mode or marker is moved aside") {
  if (!as_root()) return;
  TempDir t;
  const auto make = [&](const std::string& job, mode_t mode, const std::string& marker_job) {
    const fs::path d = t.path / wireup::snapshot_dir_name_for_job(job);
    fs::create_directory(d);
    write(d / "owner", wireup::snapshot_owner_text(marker_job, kUser));
    REQUIRE(::chown((d / "owner").c_str(), kUser, kGroup) == 0);
    REQUIRE(::chown(d.c_str(), kUser, kGroup) == 0);
    REQUIRE(::chmod(d.c_str(), mode) == 0);
  };
  SECTION("mode 0755: others could read the snapshots") {
    make("35", 0755, "35");
    const auto r = prepare_job_snapshot_dir(t.path.string(), "35", kUser, kGroup);
    CHECK_THAT(describe(r, t.path.string(), "35"), Catch::Contains("(mode 0755, not 0700) to "));
    check_job_dir(t.path, "35");
    epilog_removes_moved(t.path, "35");
  }
  SECTION("a marker naming another job") {
    make("36", 0700, "9");
    const auto r = prepare_job_snapshot_dir(t.path.string(), "36", kUser, kGroup);
    CHECK_THAT(describe(r, t.path.string(), "36"),
               Catch::Contains("(its owner marker names job 9) to "));
    check_job_dir(t.path, "36");
    epilog_removes_moved(t.path, "36");
  }
  SECTION("exactly the job's (another node's prolog on a shared parent): kept as it is") {
    make("37", 0700, "37");
    write(t.path / "wireup-37" / "n0", "");
    const auto r = prepare_job_snapshot_dir(t.path.string(), "37", kUser, kGroup);
    CHECK(r.kept);
    CHECK_FALSE(r.created);
    CHECK(describe(r, t.path.string(), "37").empty());
    CHECK(fs::exists(t.path / "wireup-37" / "n0"));
    CHECK(work_dirs(t.path, "37").empty());
  }
}

TEST_CASE("a parent another user owns without the sticky bit gets nothing, and says why") {
  if (!as_root()) return;
  TempDir t;
  const fs::path parent = t.path / "users\n";
  fs::create_directory(parent);
  REQUIRE(::chown(parent.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(parent.c_str(), 0755) == 0);
  const auto r = prepare_job_snapshot_dir(parent.string(), "38", kUser, kGroup);
  CHECK_FALSE(r.created);
  const std::string line = describe(r, parent.string(), "38");
  CHECK_THAT(line, Catch::Contains("users\\n: owned by uid 65534 and not sticky (mode 0755), so "
                                   "nothing is made there"));
  CHECK(line.find('\n') == std::string::npos);  // escaped: one line
  CHECK_FALSE(fs::exists(parent / "wireup-38"));
  // A missing parent: nothing to do, nothing to say.
  const auto none = prepare_job_snapshot_dir((t.path / "none").string(), "38", kUser, kGroup);
  CHECK(none.error.empty());
  CHECK(describe(none, (t.path / "none").string(), "38").empty());
}

TEST_CASE(
    "the epilog removes from a work directory only what is not root's, and only from root's") {
  if (!as_root()) return;
  TempDir t;
  // Root's file in a work directory of the prolog: left (the job's user is not root).
  const fs::path work = t.path / wireup::prolog_work_dir_name("39", 1);
  fs::create_directory(work);
  REQUIRE(::chmod(work.c_str(), 0700) == 0);
  write(work / "moved-0", "root's");
  auto r = sweep_moved_aside(t.path.string(), "39", kUser);
  CHECK_FALSE(r.removed);
  CHECK_THAT(describe_moved_aside(r, t.path.string(), "39"),
             Catch::Contains("moved-0: owned by root, not the job's user, never removed"));
  CHECK(read(work / "moved-0") == "root's");
  // A name like a work directory that another user made: never entered.
  const fs::path fake = t.path / wireup::prolog_work_dir_name("39", 2);
  fs::create_directory(fake);
  write(fake / "f", "nobody's");
  REQUIRE(::chown((fake / "f").c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chown(fake.c_str(), kNobody, kNobody) == 0);
  REQUIRE(::chmod(fake.c_str(), 0700) == 0);
  r = sweep_moved_aside(t.path.string(), "39", kUser);
  CHECK_THAT(describe_moved_aside(r, t.path.string(), "39"),
             Catch::Contains("not a work directory of the job prolog (root's, 0700), left"));
  CHECK(read(fake / "f") == "nobody's");
}
