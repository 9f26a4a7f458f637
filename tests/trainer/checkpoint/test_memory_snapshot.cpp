// Memory snapshots on a real file system (no Torch): where they live, the
// private directories (real symlinks, modes, owners), the owner marker, the
// manifest and its commit, inspection of parts and replicas, the resume
// source over real snapshots, capacity, and cleanup.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <set>

#include "checkpoint/checkpoint_files.hpp"
#include "checkpoint/memory_snapshot_dir.hpp"
#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_part.hpp"
#include "checkpoint/memory_snapshot_plan.hpp"
#include "checkpoint/run_identity.hpp"
#include "wireup/error.hpp"
#include "wireup/memory_snapshot_owner.hpp"

namespace fs = std::filesystem;
using namespace wireup::train;
using Catch::Matchers::Contains;
using wireup::InputError;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/wireup-memsnap-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& k) -> std::optional<std::string> {
    const auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777u;
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  FAIL("no InputError");
  return "";
}

// Writes a complete snapshot of `step` the way the trainer will: each node
// its ranks' parts and the replicas it holds, then the manifest and marker.
// replica_on[r]: the node holding rank r's replica ("" for none).
void write_snapshot(const fs::path& root, const std::string& job, std::int64_t step,
                    const std::vector<std::string>& rank_node,
                    const std::vector<std::string>& replica_on) {
  claim_root(root, job);
  SnapshotManifest m{job, ::geteuid(), step, rank_node, {}, {}, {}};
  for (std::size_t r = 0; r < rank_node.size(); ++r) {
    const std::string data = "state of rank " + std::to_string(r) + " at " + std::to_string(step);
    const fs::path dir = root / rank_node[r] / snapshot_dir_name(step);
    open_private_dir(root / rank_node[r]);
    open_private_dir(dir);
    const int rank = static_cast<int>(r);
    const std::string sum =
        write_private_file(dir / part_file_name(rank), data.data(), data.size());
    m.parts.push_back({rank, rank_node[r], data.size(), sum});
    if (replica_on[r].empty()) continue;
    const fs::path held = root / replica_on[r] / snapshot_dir_name(step);
    open_private_dir(root / replica_on[r]);
    open_private_dir(held);
    write_private_file(held / replica_file_name(rank), data.data(), data.size());
    m.replicas.push_back({rank, replica_on[r], data.size(), sum});
  }
  for (const std::string& node : std::set<std::string>(rank_node.begin(), rank_node.end()))
    commit_snapshot(root / node / snapshot_dir_name(step), m);
}

ResumeInputs scan(const fs::path& root, const std::string& job,
                  const std::vector<std::string>& rank_node, std::vector<std::int64_t> disk,
                  HeldFiles held = HeldFiles::parts_and_replicas) {
  ResumeInputs in{{}, std::move(disk), rank_node, job, ::geteuid(), {}, {}};
  for (const std::string& node : std::set<std::string>(rank_node.begin(), rank_node.end()))
    in.nodes.push_back(scan_node_memory(root, node, job, held));
  return in;
}

void flip_byte(const fs::path& p) {
  std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
  char c = 0;
  f.seekg(0);
  f.get(c);
  f.seekp(0);
  f.put(static_cast<char>(c ^ 1));
}

}  // namespace

TEST_CASE("memory snapshot root and node name come from the flag or the job's environment") {
  CHECK(memory_snapshot_root("/scratch/m", env_of({{"SLURM_JOB_ID", "7"}})) == "/scratch/m");
  CHECK(memory_snapshot_root("", env_of({{"SLURM_JOB_ID", "4242"}})) == "/dev/shm/wireup-4242");
  CHECK_THAT(message_of([] { memory_snapshot_root("", env_of({})); }),
             Contains("--memory_checkpoint_dir"));
  CHECK_THAT(message_of([] {
               memory_snapshot_root("", env_of({{"SLURM_JOB_ID", "../x"}}));
             }),
             Contains("--memory_checkpoint_dir"));
  CHECK(node_name(env_of({{"SLURMD_NODENAME", "a17"}})) == "a17");
  CHECK_FALSE(node_name(env_of({})).empty());  // the host name
  CHECK_THAT(message_of([] {
               node_name(env_of({{"SLURMD_NODENAME", "../etc"}}));
             }),
             Contains("cannot name a directory"));
}

TEST_CASE("private directories are made 0700 whatever the umask, and refused when unsafe") {
  TempDir t;
  const mode_t old = ::umask(0277);  // mkdir alone would make it 0500
  open_private_dir(t.path / "made");
  ::umask(old);
  CHECK(mode_of(t.path / "made") == 0700);
  open_private_dir(t.path / "made");  // an existing good one is accepted

  SECTION("a symlink to a good directory is refused, never followed") {
    fs::create_directory_symlink(t.path / "made", t.path / "link");
    CHECK_THAT(message_of([&] { open_private_dir(t.path / "link"); }), Contains("a symlink"));
    CHECK_THAT(message_of([&] { claim_root(t.path / "link", "1"); }), Contains("a symlink"));
  }
  SECTION("mode 0755 is refused, naming both modes") {
    ::chmod((t.path / "made").c_str(), 0755);
    CHECK_THAT(message_of([&] { open_private_dir(t.path / "made"); }),
               Contains("mode 0755, expected 0700") && Contains((t.path / "made").string()));
  }
  SECTION("a file is refused") {
    std::ofstream(t.path / "file") << "x";
    CHECK_THAT(message_of([&] { open_private_dir(t.path / "file"); }), Contains("not a directory"));
  }
  SECTION("another user's directory is refused, naming both uids") {
    if (::geteuid() != 0) {
      WARN("not root: cannot make a directory of another user; section skipped");
      return;
    }
    REQUIRE(::chown((t.path / "made").c_str(), 65534, 65534) == 0);
    CHECK_THAT(message_of([&] { open_private_dir(t.path / "made"); }),
               Contains("owned by uid 65534, not you (0)"));
  }
}

TEST_CASE("a path a user named is shown escaped in the messages: one line, no terminal control") {
  // --memory_checkpoint_dir, --checkpoint_dir and the files under them reach
  // log lines; a newline or an escape sequence in a name stays \\n, \\x1b
  // (io::shown, escape_text) and cannot forge a line or clear the screen.
  TempDir t;
  const fs::path evil = t.path / "ck\n[resume] step=9 source=memory\x1b[2J";
  fs::create_directory(t.path / "made");
  fs::create_directory_symlink(t.path / "made", evil);
  const std::string shown = (t.path / "ck\\n[resume] step=9 source=memory\\x1b[2J").string();
  for (const std::string& m :
       {message_of([&] { open_private_dir(evil); }), message_of([&] { claim_root(evil, "1"); }),
        message_of([&] { check_capacity(evil / "missing", 1); })}) {
    CHECK_THAT(m, Contains(shown));
    CHECK(m.find('\n') == std::string::npos);
    CHECK(m.find('\x1b') == std::string::npos);
  }
  // A durable checkpoint's files: read_text, verify_checkpoint.
  fs::create_directory(t.path / "step\n1");
  const std::string fault = verify_checkpoint(t.path / "step\n1");
  CHECK_THAT(fault, Contains("step\\n1"));
  CHECK(fault.find('\n') == std::string::npos);
}

TEST_CASE("the owner marker ties DIR to one job") {
  TempDir t;
  const fs::path root = t.path / "wireup-111";
  claim_root(root, "111");
  CHECK(mode_of(root / "owner") == 0600);
  claim_root(root, "111");  // the same job again (a requeue, a new srun)
  CHECK_THAT(message_of([&] { claim_root(root, "1\nuid 0"); }), Contains("is not digits"));
  CHECK_THAT(message_of([&] { claim_root(root, "222"); }),
             Contains("belongs to job 111, this is job 222"));
  SECTION("a symlinked marker is refused") {
    fs::remove(root / "owner");
    std::ofstream(t.path / "elsewhere") << "wireup-memory-snapshot-owner 1\njob 222\nuid 0\n";
    fs::create_symlink(t.path / "elsewhere", root / "owner");
    CHECK_THAT(message_of([&] { claim_root(root, "222"); }), Contains("a symlink"));
  }
}

TEST_CASE("a squatter's default directory is refused, naming the fixes") {
  if (::geteuid() != 0) {
    WARN("not root: cannot make a directory of another user; skipped");
    return;
  }
  TempDir t;
  const fs::path root = t.path / "wireup-333";
  fs::create_directory(root);
  REQUIRE(::chown(root.c_str(), 65534, 65534) == 0);
  // Without the plugin's prolog, another user took the predictable name first: refused
  // as before (never chowned or entered), and the message says what fixes it.
  const std::string why = message_of([&] { claim_default_root(root, "333"); });
  CHECK_THAT(why, Contains(root.string() + ": owned by uid 65534, not you (0)") &&
                      Contains("spank_wireup's job prolog") && Contains("--memory_checkpoint_dir"));
  CHECK_THAT(message_of([&] { claim_root(root, "333"); }),
             !Contains("spank_wireup"));  // a DIR the user named: the user's to fix
  CHECK_FALSE(fs::exists(root / "owner"));
}

TEST_CASE("private files are 0600, replace atomically and never write through a symlink") {
  TempDir t;
  open_private_dir(t.path / "d");
  const fs::path f = t.path / "d" / "rank-00000.bin";
  write_private_file(f, "old", 3);
  CHECK(write_private_file(f, "abc", 3) == "000000000000000000000000364b3fb7");
  CHECK(mode_of(f) == 0600);
  CHECK_FALSE(fs::exists(f.string() + ".tmp"));
  // A planted PATH.tmp symlink is removed, not written through.
  std::ofstream(t.path / "victim") << "keep";
  fs::create_symlink(t.path / "victim", f.string() + ".tmp");
  write_private_file(f, "new", 3);
  std::string victim;
  std::ifstream(t.path / "victim") >> victim;
  CHECK(victim == "keep");
  std::string why;
  fs::create_symlink(f, t.path / "d" / "link");
  CHECK(checksum_private_file(t.path / "d" / "link", 3, why).empty());
  CHECK(why == "a symlink");
  CHECK(checksum_private_file(f, 4, why).empty());
  CHECK(why == "3 bytes, expected 4");
  // Read back in chunks of each quarter (5 MiB: two a quarter), the file's checksum is
  // the one its writer returned; one flipped byte in any quarter changes it.
  std::vector<char> big((5u << 20) + 13);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>(i * 2654435761u >> 13);
  const fs::path g = t.path / "d" / "rank-00001.bin";
  const std::string written = write_private_file(g, big.data(), big.size());
  CHECK(checksum_private_file(g, big.size(), why) == written);
  for (const std::size_t at : {std::size_t{0}, big.size() / 2, big.size() - 1}) {
    big[at] = static_cast<char>(big[at] ^ 1);
    rewrite_private_file(g, big.data(), big.size());
    CHECK(checksum_private_file(g, big.size(), why) != written);
    big[at] = static_cast<char>(big[at] ^ 1);
  }
}

TEST_CASE("a rewrite reuses the file in place, shrinks it, and never writes through a symlink") {
  TempDir t;
  open_private_dir(t.path / "d");
  const fs::path f = t.path / "d" / "rank-00000.bin";
  write_private_file(f, "0123456789", 10);
  struct stat before {};
  REQUIRE(::stat(f.c_str(), &before) == 0);
  CHECK(rewrite_private_file(f, "abc", 3) == "000000000000000000000000364b3fb7");
  struct stat after {};
  REQUIRE(::stat(f.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // the same file, its pages reused
  CHECK(fs::file_size(f) == 3);
  CHECK(mode_of(f) == 0600);
  CHECK_FALSE(fs::exists(f.string() + ".tmp"));
  // A symlink planted at NAME is moved aside and refused; its target stays.
  std::ofstream(t.path / "victim") << "keep";
  fs::remove(f);
  fs::create_symlink(t.path / "victim", f);
  CHECK_THROWS(rewrite_private_file(f, "new", 3));
  std::string victim;
  std::ifstream(t.path / "victim") >> victim;
  CHECK(victim == "keep");
  CHECK_FALSE(fs::exists(f.string() + ".tmp"));
  // No file yet: one is made.
  rewrite_private_file(t.path / "d" / "rank-00001.bin", "xyz", 3);
  CHECK(fs::file_size(t.path / "d" / "rank-00001.bin") == 3);
}

TEST_CASE("a retired snapshot becomes the next one: markers first, strangers' files refused") {
  TempDir t;
  const fs::path node = t.path / "n0";
  open_private_dir(node);
  open_private_dir(node / snapshot_dir_name(3));
  for (const char* name :
       {"rank-00000.bin", "rank-00001.bin", "rank-00007.bin", "manifest", "complete"})
    write_private_file(node / snapshot_dir_name(3) / name, "x", 1);
  CHECK(recycle_snapshot_dir(node, 3, 9, {"rank-00000.bin", "rank-00001.bin"}));
  CHECK_FALSE(fs::exists(node / snapshot_dir_name(3)));
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(node / snapshot_dir_name(9)))
    names.insert(e.path().filename().string());
  CHECK(names == std::set<std::string>{"rank-00000.bin", "rank-00001.bin"});
  // A file wireup did not make: not recycled (retention then leaves and names it).
  open_private_dir(node / snapshot_dir_name(12));
  std::ofstream(node / snapshot_dir_name(12) / "notes.txt") << "mine";
  CHECK_FALSE(recycle_snapshot_dir(node, 12, 15, {}));
  CHECK(fs::exists(node / snapshot_dir_name(12) / "notes.txt"));
  // A symlink in place of the retired directory: not recycled.
  fs::create_directory_symlink(node / snapshot_dir_name(9), node / snapshot_dir_name(18));
  CHECK_FALSE(recycle_snapshot_dir(node, 18, 21, {}));
}

TEST_CASE("a snapshot's manifest round-trips and is parsed strictly") {
  SnapshotManifest m{"4242", 1000, 40, {"a1", "a2"}, {}, {}, {}};
  m.identity.model.layers = 6;
  m.identity.model.rope_scaling = parse_rope_scaling("llama3:8,1,4,64");
  m.identity.lora = AdapterMeta{{}, "/base/\n\x1b", std::string(64, 'f')};
  m.identity.lora->lora.rank = 8;
  m.identity.lora->lora.alpha = 16;
  const std::string h(32, 'a');
  m.parts = {{0, "a1", 10, h}, {1, "a2", 12, h}};
  m.replicas = {{0, "a2", 10, h}};
  std::string why;
  const auto back = parse_snapshot_manifest(to_text(m), why);
  REQUIRE(back);
  CHECK(to_text(*back) == to_text(m));
  CHECK(back->rank_node == m.rank_node);
  CHECK(identity_mismatch(back->identity, m.identity).empty());
  CHECK(back->identity.model.layers == 6);
  CHECK(back->identity.lora->base == m.identity.lora->base);

  const auto bad = [&](std::string text) {
    why.clear();
    CHECK_FALSE(parse_snapshot_manifest(text, why));
    return why;
  };
  std::string t = to_text(m);
  CHECK_THAT(bad(t.substr(0, t.size() - 4)), Contains("expected replica or end"));
  CHECK_THAT(bad(t.substr(0, t.size() - 1)), Contains("cut short"));
  CHECK_THAT(bad(t + "junk\n"), Contains("text after end"));
  CHECK_THAT(bad("hello\n"), Contains("not a wireup memory snapshot manifest"));
  // An older build's snapshot (SHA-256 checksums): refused by its version.
  std::string v1 = t;
  v1.replace(0, 24, "wireup-memory-snapshot 1");
  CHECK_THAT(bad(v1), Contains("version '1'; this build reads version 3"));
  // Version 2, before the identity line: refused the same way (the resume
  // then falls back to disk).
  std::string v2 = t;
  v2.replace(0, 24, "wireup-memory-snapshot 2");
  CHECK_THAT(bad(v2), Contains("version '2'; this build reads version 3"));
  const std::size_t id_at = t.find("identity ");
  const std::size_t id_end = t.find('\n', id_at);
  const auto with_identity = [&](const std::string& json) {
    return t.substr(0, id_at) + "identity " + json + t.substr(id_end);
  };
  CHECK_THAT(bad(with_identity("{}")), Contains("line 5: identity: "));
  CHECK_THAT(bad(with_identity("[[[[[[[[[[1]]]]]]]]]]")), Contains("nested deeper"));
  std::string zero_heads = t;
  zero_heads.replace(zero_heads.find("\"heads\":8"), 9, "\"heads\":0");
  CHECK_THAT(bad(zero_heads), Contains("must be positive"));
  std::string no_identity = t;
  no_identity.erase(id_at, id_end + 1 - id_at);
  CHECK_THAT(bad(no_identity), Contains("line 5: expected identity <JSON>"));
  std::string no_alpha = t;
  no_alpha.replace(no_alpha.find("\"alpha\":16.0"), 12, "\"alpha\":0.0");
  CHECK_THAT(bad(no_alpha), Contains("line 5: identity: \"lora\": --lora_alpha 0"));
  std::string sha = t;
  sha.replace(sha.find("crc32c " + h), 7 + h.size(), "sha256 " + std::string(64, 'a'));
  CHECK_THAT(bad(sha), Contains("expected rank R node N bytes B crc32c H"));
  std::string swapped = t;
  swapped.replace(swapped.find("rank 1"), 6, "rank 2");
  CHECK_THAT(bad(swapped), Contains("line 8: expected rank 1, found rank 2"));
  std::string own = t;
  own.replace(own.find("replica 0 node a2"), 17, "replica 0 node a1");
  CHECK_THAT(bad(own), Contains("on its own node a1"));
  std::string upper = t;
  upper.replace(upper.find(h), 1, "A");
  CHECK_THAT(bad(upper), Contains("lowercase hex"));
  std::string node = t;
  node.replace(node.find("node a2"), 7, "node ..");
  CHECK_THAT(bad(node), Contains("is not a node name"));
  CHECK_THAT(bad("wireup-memory-snapshot 3\njob 1\nuid 0\nstep 1\nidentity " +
                 to_json(RunIdentity{}) + "\nworld_size 99999999\n"),
             Contains("world_size"));
}

TEST_CASE("resume over real snapshots: memory, a corrupt part, a lost node, another layout") {
  TempDir t;
  const fs::path root = t.path / "wireup-9";
  const std::vector<std::string> layout{"a1", "a1", "a2", "a2"};
  const std::vector<std::string> replicas{"a2", "a2", "a1", "a1"};
  write_snapshot(root, "9", 20, layout, replicas);
  write_snapshot(root, "9", 40, layout, replicas);

  SECTION("every node holds its parts: memory, the newest") {
    const ResumeChoice c = choose_resume_source(scan(root, "9", layout, {30}));
    CHECK(c.source == ResumeSource::memory);
    CHECK(c.step == 40);
    CHECK(c.holder == layout);
    CHECK(c.skipped.empty());
    CHECK(resume_lines(c)[0] == "[resume] step=40 source=memory");
  }
  SECTION("a corrupt part falls back to the next newest state, naming it") {
    flip_byte(root / "a2" / snapshot_dir_name(40) / part_file_name(3));
    const ResumeChoice c = choose_resume_source(scan(root, "9", layout, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK(c.step == 30);
    REQUIRE(c.skipped.size() == 1);
    CHECK(c.skipped[0] ==
          "memory snapshot step 40 on node a2: part of rank 3 (rank-00003.bin) fails its checksum");
    CHECK(choose_resume_source(scan(root, "9", layout, {})).step == 20);
  }
  SECTION("a corrupt replica: skipped when replicas are checked, unread when parts alone are") {
    flip_byte(root / "a1" / snapshot_dir_name(40) / replica_file_name(2));
    const ResumeChoice all = choose_resume_source(scan(root, "9", layout, {30}));
    CHECK(all.source == ResumeSource::disk);
    REQUIRE(all.skipped.size() == 1);
    CHECK(all.skipped[0] ==
          "memory snapshot step 40 on node a1: replica of rank 2 "
          "(replica-rank-00002.bin) fails its checksum");
    const ResumeInputs parts = scan(root, "9", layout, {30}, HeldFiles::parts);
    CHECK(parts.nodes[0].snapshots[0].replicas.empty());
    CHECK(parts.nodes[0].snapshots[0].parts == std::vector<int>{0, 1});
    const ResumeChoice c = choose_resume_source(parts);
    CHECK(c.source == ResumeSource::memory);
    CHECK(c.step == 40);
    CHECK(c.skipped.empty());
  }
  SECTION("a snapshot without its complete marker is skipped, naming why") {
    fs::remove(root / "a1" / snapshot_dir_name(40) / "complete");
    const ResumeChoice c = choose_resume_source(scan(root, "9", layout, {}));
    CHECK(c.source == ResumeSource::memory);
    CHECK(c.step == 20);
    REQUIRE_FALSE(c.skipped.empty());
    CHECK_THAT(c.skipped[0], Contains("on node a1: no complete marker"));
  }
  SECTION("a node whose memory directory is gone resumes from its replicas: peer") {
    fs::remove_all(root / "a2");
    const std::vector<std::string> now{"a1", "a1", "b7", "b7"};  // a2 replaced by b7
    const ResumeChoice c = choose_resume_source(scan(root, "9", now, {30}));
    CHECK(c.source == ResumeSource::peer);
    CHECK(c.step == 40);
    CHECK(c.holder == std::vector<std::string>{"a1", "a1", "a1", "a1"});
    CHECK(resume_lines(c)[0] == "[resume] step=40 source=peer");
    // What load() checks the received replicas against: the manifest's parts.
    REQUIRE(c.expected.size() == 4);
    CHECK(c.expected[2].rank == 2);
    CHECK(c.expected[2].node == "a2");
    CHECK(c.expected[2].bytes == std::string("state of rank 2 at 40").size());
  }
  SECTION("another world size: disk, with the reason") {
    const ResumeChoice c = choose_resume_source(scan(root, "9", {"a1", "a2"}, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK(c.step == 30);
    REQUIRE_FALSE(c.skipped.empty());
    CHECK(c.skipped[0] == "memory snapshot step 40: world size 4, this run 2");
  }
  SECTION("a snapshot of another job is refused") {
    const NodeMemory n = scan_node_memory(root, "a1", "10");
    CHECK_THAT(n.problem, Contains("belongs to job 9, this is job 10"));
    CHECK(choose_resume_source(scan(root, "10", layout, {30})).source == ResumeSource::disk);
  }
  SECTION("a symlinked node directory is never read") {
    fs::rename(root / "a2", t.path / "moved");
    fs::create_directory_symlink(t.path / "moved", root / "a2");
    const ResumeChoice c = choose_resume_source(scan(root, "9", layout, {30}));
    CHECK(c.source == ResumeSource::disk);
    CHECK_THAT(c.skipped[0], Contains("memory of node a2") && Contains("a symlink"));
  }
}

// The scan checks every part, then load() reads it again: what it reads is
// checked against the manifest the scan read, so a part changed in between
// (rewritten, grown, made a symlink) is refused, naming it, and never loaded.
TEST_CASE("a part changed after the resume's scan is refused when it is read") {
  TempDir t;
  const fs::path root = t.path / "wireup-9";
  const std::vector<std::string> layout{"a1", "a1", "a2", "a2"};
  write_snapshot(root, "9", 40, layout, {"a2", "a2", "a1", "a1"});
  const ResumeChoice c = choose_resume_source(scan(root, "9", layout, {}));
  REQUIRE(c.source == ResumeSource::memory);
  REQUIRE(c.expected.size() == 4);
  const fs::path part = root / "a2" / snapshot_dir_name(40) / part_file_name(3);
  std::string why;
  SECTION("unchanged: the bytes the manifest records; a replica checks as its part") {
    CHECK(read_checked_part(part, c.expected[3], why) == "state of rank 3 at 40");
    CHECK(why.empty());
    const fs::path replica = root / "a1" / snapshot_dir_name(40) / replica_file_name(3);
    CHECK(read_checked_part(replica, c.expected[3], why) == "state of rank 3 at 40");
    CHECK(read_checked_part(replica, c.expected[2], why).empty());
    CHECK_THAT(why, Contains("replica-rank-00003.bin: fails its checksum"));
  }
  SECTION("a byte flipped after the scan: refused, naming the file and both checksums") {
    flip_byte(part);
    CHECK(read_checked_part(part, c.expected[3], why).empty());
    CHECK_THAT(why, Contains(part.string() + ": fails its checksum: crc32c ") &&
                        Contains(", the manifest says " + c.expected[3].checksum));
  }
  SECTION("rewritten longer or shorter: refused by its size, the longer one never read") {
    write_private_file(part, "state of rank 3 at 40 and more", 30);
    CHECK(read_checked_part(part, c.expected[3], why).empty());
    CHECK_THAT(why, Contains("30 bytes, more than the 21 expected"));
    write_private_file(part, "state", 5);
    CHECK(read_checked_part(part, c.expected[3], why).empty());
    CHECK_THAT(why, Contains("5 bytes, the manifest says 21"));
  }
  SECTION("replaced by a symlink to an intact copy: not followed") {
    fs::copy_file(part, t.path / "copy");
    fs::remove(part);
    fs::create_symlink(t.path / "copy", part);
    CHECK(read_checked_part(part, c.expected[3], why).empty());
    CHECK_THAT(why, Contains(part.string()) && Contains("symlink"));
  }
  SECTION("removed: refused as missing") {
    fs::remove(part);
    CHECK(read_checked_part(part, c.expected[3], why).empty());
    CHECK_THAT(why, Contains("missing"));
  }
}

TEST_CASE("capacity: two snapshots must fit, the refusal names both sizes") {
  CHECK(capacity_problem("/dev/shm/wireup-1", 1ull << 30, 2ull << 30, 0).empty());
  CHECK(capacity_problem("/dev/shm/wireup-1", 1ull << 30, 1ull << 30, 1ull << 30).empty());
  const std::string why = capacity_problem("/dev/shm/wireup-1", 3ull << 30, 5ull << 30, 0);
  CHECK_THAT(why, Contains("/dev/shm/wireup-1") && Contains("room for 5.0 GiB") &&
                      Contains("takes 3.0 GiB") && Contains("two must fit"));
  CHECK(human_bytes(17) == "17 B");
  CHECK(human_bytes(1536) == "1.5 KiB");
  CHECK(human_bytes(512ull << 20) == "512 MiB");
  TempDir t;
  check_capacity(t.path, 1);  // a real statvfs: one byte twice fits anywhere
  CHECK_THAT(message_of([&] { check_capacity(t.path, 1ull << 62); }),
             Contains(t.path.string()) && Contains("takes 4096 PiB"));
}

TEST_CASE("cleanup removes what the job made, leaves what it did not, follows no symlink") {
  TempDir t;
  const fs::path root = t.path / "wireup-5";
  write_snapshot(root, "5", 10, {"a1", "a2"}, {"a2", "a1"});
  CHECK_THAT(message_of([&] { remove_snapshot_dir(root, "a1", "6"); }),
             Contains("belongs to job 5, this is job 6"));
  std::ofstream(t.path / "precious") << "x";
  fs::create_symlink(t.path / "precious", root / "a1" / snapshot_dir_name(10) / "complete.tmp");
  const std::vector<std::string> left = remove_snapshot_dir(root, "a1", "5");
  REQUIRE(left.size() == 1);
  CHECK_THAT(left[0], Contains("complete.tmp (not made by wireup)"));
  CHECK(fs::exists(t.path / "precious"));
  CHECK(fs::exists(root / "a2"));  // another node's directory (a shared DIR) stays
  fs::remove(root / "a1" / snapshot_dir_name(10) / "complete.tmp");
  CHECK(remove_snapshot_dir(root, "a1", "5").empty());
  CHECK(remove_snapshot_dir(root, "a2", "5").empty());
  CHECK_FALSE(fs::exists(root));  // the last node removes the marker and DIR
}

TEST_CASE("cleanup leaves the job prolog's DIR and its marker for the job's epilog") {
  // The prolog's marker says it made DIR: removing DIR would free its name for anyone
  // until the job's next srun. What the run wrote goes; DIR and the marker stay.
  TempDir t;
  const fs::path root = t.path / "wireup-5";
  open_private_dir(root);
  const std::string marker =
      wireup::snapshot_owner_text("5", ::geteuid(), wireup::SnapshotDirMaker::prolog);
  write_private_file(root / "owner", marker.data(), marker.size());
  write_snapshot(root, "5", 10, {"a1", "a2"}, {"a2", "a1"});  // claim_root accepts it
  CHECK(remove_snapshot_dir(root, "a1", "5").empty());
  CHECK(remove_snapshot_dir(root, "a2", "5").empty());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root)) names.push_back(e.path().filename().string());
  CHECK(names == std::vector<std::string>{"owner"});
  CHECK((fs::status(root).permissions() & fs::perms::all) == fs::perms::owner_all);
  std::ifstream in(root / "owner");
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == marker);  // not rewritten
  // Another job's DIR of the prolog is still refused, and kept.
  CHECK_THAT(message_of([&] { remove_snapshot_dir(root, "a1", "6"); }),
             Contains("belongs to job 5, this is job 6"));
}
