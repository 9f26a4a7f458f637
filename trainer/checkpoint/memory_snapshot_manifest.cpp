#include "checkpoint/memory_snapshot_manifest.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <set>
#include <thread>

#include "checkpoint/memory_snapshot_dir.hpp"
#include "wireup/crc32c.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/text.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

constexpr std::string_view kMagicName = "wireup-memory-snapshot ";
// Version 3 added the identity line; a manifest of version 2 is refused (its
// snapshot is skipped, the resume falls back to disk).
constexpr const char* kMagic = "wireup-memory-snapshot 3";

std::string part_line(const char* key, const SnapshotPart& p) {
  return std::string(key) + " " + std::to_string(p.rank) + " node " + p.node + " bytes " +
         std::to_string(p.bytes) + " crc32c " + p.checksum + "\n";
}

// Reads the manifest's lines in order; each failure sets `why` and returns false.
struct LineReader {
  std::vector<std::string> lines;
  std::size_t at = 0;
  std::string& why;

  bool fail(const std::string& what) {
    why = "line " + std::to_string(at + 1) + ": " + what;
    return false;
  }
  // "KEY VALUE" with a decimal VALUE of at most max.
  bool number(const std::string& key, std::uint64_t max, std::uint64_t& out) {
    if (at >= lines.size()) return fail("expected " + key + ", found the end");
    const std::vector<std::string> f = split(lines[at], ' ');
    if (f.size() != 2 || f[0] != key) return fail("expected " + key + " N");
    const std::optional<std::uint64_t> v = parse_uint(f[1], max);
    if (!v)
      return fail(key + " " + wireup::quoted(f[1]) + " is not a number up to " +
                  std::to_string(max));
    out = *v;
    ++at;
    return true;
  }
  // "KEY R node N bytes B crc32c H".
  bool part(const std::string& key, SnapshotPart& p) {
    const std::vector<std::string> f = split(lines[at], ' ');
    if (f.size() != 8 || f[0] != key || f[2] != "node" || f[4] != "bytes" || f[6] != "crc32c")
      return fail("expected " + key + " R node N bytes B crc32c H");
    const std::optional<std::uint64_t> rank = parse_uint(f[1], kMaxSnapshotWorldSize - 1);
    const std::optional<std::uint64_t> bytes = parse_uint(f[5]);
    if (!rank) return fail("rank " + wireup::quoted(f[1]) + " is not a rank");
    if (!is_safe_node_name(f[3]))
      return fail("node " + wireup::quoted(f[3]) + " is not a node name");
    if (!bytes) return fail("bytes " + wireup::quoted(f[5]) + " is not a number");
    if (!is_crc32c_quarters_hex(f[7]))
      return fail("crc32c " + wireup::quoted(f[7]) + " is not 32 lowercase hex digits");
    p = {static_cast<int>(*rank), f[3], *bytes, f[7]};
    ++at;
    return true;
  }
};

// "identity <JSON>" (run_identity.hpp).
bool parse_identity(LineReader& r, SnapshotManifest& m) {
  constexpr std::string_view key = "identity ";
  if (r.at >= r.lines.size() || r.lines[r.at].rfind(key, 0) != 0)
    return r.fail("expected identity <JSON>");
  try {
    m.identity = run_identity_from_json(r.lines[r.at].substr(key.size()), "identity");
  } catch (const std::exception& e) {
    return r.fail(e.what());
  }
  ++r.at;
  return true;
}

bool parse_header(LineReader& r, SnapshotManifest& m, std::uint64_t& world) {
  if (!r.lines.empty() && r.lines[0] != kMagic && r.lines[0].rfind(kMagicName, 0) == 0)
    return r.fail("a memory snapshot manifest of version " +
                  wireup::quoted(r.lines[0].substr(kMagicName.size())) +
                  "; this build reads version 3 (written by another wireup build)");
  if (r.lines.empty() || r.lines[0] != kMagic)
    return r.fail("not a wireup memory snapshot manifest");
  r.at = 1;
  if (r.at >= r.lines.size() || r.lines[1].rfind("job ", 0) != 0 ||
      !parse_uint(r.lines[1].substr(4)))
    return r.fail("expected job <digits>");
  m.job_id = r.lines[1].substr(4);
  r.at = 2;
  std::uint64_t step = 0;
  if (!r.number("uid", UINT32_MAX, m.uid) || !r.number("step", INT64_MAX, step) ||
      !parse_identity(r, m) || !r.number("world_size", kMaxSnapshotWorldSize, world))
    return false;
  if (world == 0) return r.fail("world_size 0");
  m.step = static_cast<std::int64_t>(step);
  return true;
}

bool parse_parts(LineReader& r, SnapshotManifest& m, std::uint64_t world) {
  for (std::uint64_t rank = 0; rank < world; ++rank) {
    if (r.at >= r.lines.size()) return r.fail("expected rank " + std::to_string(rank));
    SnapshotPart p;
    if (!r.part("rank", p)) return false;
    if (static_cast<std::uint64_t>(p.rank) != rank) {
      --r.at;
      return r.fail("expected rank " + std::to_string(rank) + ", found rank " +
                    std::to_string(p.rank));
    }
    m.rank_node.push_back(p.node);
    m.parts.push_back(p);
  }
  std::set<int> seen;
  while (r.at < r.lines.size() && r.lines[r.at].rfind("replica ", 0) == 0) {
    SnapshotPart p;
    if (!r.part("replica", p)) return false;
    --r.at;
    if (static_cast<std::uint64_t>(p.rank) >= world)
      return r.fail("replica of rank " + std::to_string(p.rank) + ", world size " +
                    std::to_string(world));
    if (!seen.insert(p.rank).second)
      return r.fail("a second replica of rank " + std::to_string(p.rank));
    const SnapshotPart& own = m.parts[static_cast<std::size_t>(p.rank)];
    if (p.node == own.node)
      return r.fail("replica of rank " + std::to_string(p.rank) + " on its own node " + p.node);
    if (p.bytes != own.bytes || p.checksum != own.checksum)
      return r.fail("replica of rank " + std::to_string(p.rank) + " differs from its part");
    m.replicas.push_back(p);
    ++r.at;
  }
  return true;
}

}  // namespace

std::string to_text(const SnapshotManifest& m) {
  std::string s = std::string(kMagic) + "\njob " + m.job_id + "\nuid " + std::to_string(m.uid) +
                  "\nstep " + std::to_string(m.step) + "\nidentity " + to_json(m.identity) +
                  "\nworld_size " + std::to_string(m.parts.size()) + "\n";
  for (const SnapshotPart& p : m.parts) s += part_line("rank", p);
  for (const SnapshotPart& p : m.replicas) s += part_line("replica", p);
  return s + "end\n";
}

std::optional<SnapshotManifest> parse_snapshot_manifest(const std::string& text, std::string& why) {
  if (text.empty() || text.back() != '\n') {
    why = "does not end with a newline (cut short)";
    return std::nullopt;
  }
  LineReader r{split(std::string_view(text).substr(0, text.size() - 1), '\n'), 0, why};
  SnapshotManifest m;
  std::uint64_t world = 0;
  if (!parse_header(r, m, world) || !parse_parts(r, m, world)) return std::nullopt;
  if (r.at >= r.lines.size() || r.lines[r.at] != "end") {
    r.fail("expected replica or end");
    return std::nullopt;
  }
  if (r.at + 1 != r.lines.size()) {
    ++r.at;
    r.fail("text after end");
    return std::nullopt;
  }
  return m;
}

void commit_snapshot(const fs::path& snap_dir, const SnapshotManifest& m) {
  const std::string text = to_text(m);
  const std::string sum = write_private_file(snap_dir / "manifest", text.data(), text.size());
  const std::string marker = "complete " + sum + "\n";
  write_private_file(snap_dir / "complete", marker.data(), marker.size());
}

namespace {

// The manifest behind a complete marker, checked against this snapshot; sets
// s.problem when anything is off.
void read_manifest(const fs::path& snap_dir, const std::string& job_id, SnapshotState& s) {
  std::string why;
  const std::optional<std::string> marker = read_private_text(snap_dir / "complete", 128, why);
  if (!marker) {
    s.problem = why == "missing" ? "no complete marker (a snapshot in progress or cut short)"
                                 : "complete marker " + why;
    return;
  }
  const std::optional<std::string> text =
      read_private_text(snap_dir / "manifest", kMaxSnapshotManifestBytes, why);
  if (!text) {
    s.problem = "manifest " + why;
    return;
  }
  if (*marker != "complete " + crc32c_quarters_hex(text->data(), text->size()) + "\n") {
    s.problem = "manifest does not match its complete marker (changed after the commit)";
    return;
  }
  s.manifest = parse_snapshot_manifest(*text, why);
  if (!s.manifest) {
    s.problem = "manifest " + why;
  } else if (s.manifest->step != s.step) {
    s.problem = "manifest names step " + std::to_string(s.manifest->step);
  } else if (s.manifest->job_id != job_id) {
    s.problem = "written by job " + s.manifest->job_id + ", this is job " + job_id;
  } else if (s.manifest->uid != ::geteuid()) {
    s.problem = "written by uid " + std::to_string(s.manifest->uid) + ", not you (" +
                std::to_string(::geteuid()) + ")";
  }
}

struct HeldFile {
  const SnapshotPart* part;
  bool replica;
  std::string name;
  std::string sum, why;  // the checksum, or why there is none
};

// Checksums the files at once, on up to one thread per core: a node's snapshots
// are its ranks' whole training states, and a resume waits for every byte.
void checksum_files(const fs::path& snap_dir, std::vector<HeldFile>& files) {
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < files.size(); i = next++) {
      HeldFile& f = files[i];
      try {
        f.sum = checksum_private_file(snap_dir / f.name, f.part->bytes, f.why);
      } catch (const std::exception& e) {
        f.why = e.what();
      }
    }
  };
  const std::size_t n =
      std::min<std::size_t>(files.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> threads;
  for (std::size_t t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
}

// Checks the parts and replicas `node` holds; records the good ranks in s.parts and
// s.replicas, and the first problem in file order.
void check_files(const fs::path& snap_dir, const std::string& node, HeldFiles held,
                 SnapshotState& s) {
  std::vector<HeldFile> files;
  for (const bool replica : {false, true})
    for (const SnapshotPart& p : replica ? s.manifest->replicas : s.manifest->parts)
      if (p.node == node && (!replica || held == HeldFiles::parts_and_replicas))
        files.push_back(
            {&p, replica, replica ? replica_file_name(p.rank) : part_file_name(p.rank), "", ""});
  checksum_files(snap_dir, files);
  for (const HeldFile& f : files) {
    const std::string what = (f.replica ? "replica of rank " : "part of rank ") +
                             std::to_string(f.part->rank) + " (" + f.name;
    if (f.sum.empty()) {
      if (s.problem.empty()) s.problem = what + ") " + f.why;
    } else if (f.sum != f.part->checksum) {
      if (s.problem.empty()) s.problem = what + ") fails its checksum";
    } else {
      (f.replica ? s.replicas : s.parts).push_back(f.part->rank);
    }
  }
}

}  // namespace

SnapshotState inspect_snapshot(const fs::path& snap_dir, std::int64_t step, const std::string& node,
                               const std::string& job_id, HeldFiles held) {
  SnapshotState s;
  s.step = step;
  struct stat st {};
  if (::lstat(snap_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & 0777u) != 0700u) {
    s.problem = "not a private directory of yours (a symlink, another owner or mode)";
    return s;
  }
  read_manifest(snap_dir, job_id, s);
  if (!s.problem.empty()) return s;
  check_files(snap_dir, node, held, s);
  return s;
}

bool node_memory_present(const fs::path& root, const std::string& node) {
  struct stat st {};
  return ::lstat((root / node).c_str(), &st) == 0;
}

NodeMemory scan_node_memory(const fs::path& root, const std::string& node,
                            const std::string& job_id, HeldFiles held) {
  NodeMemory mem;
  mem.node = node;
  const fs::path dir = root / node;
  if (!node_memory_present(root, node)) return mem;  // missing: present stays false
  mem.present = true;
  try {
    open_private_dir(root);
    open_private_dir(dir);
    if (!check_root_owner(root, job_id))  // the marker must name this job and user
      throw InputError(io::shown(root) + ": no owner marker (not made by wireup-train)");
  } catch (const InputError& e) {
    mem.problem = e.what();
    return mem;
  }
  std::vector<std::int64_t> steps;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (const auto step = snapshot_dir_step(e.path().filename().string())) steps.push_back(*step);
  if (ec) mem.problem = io::shown(dir) + ": cannot list: " + ec.message();
  std::sort(steps.rbegin(), steps.rend());
  for (const std::int64_t step : steps)
    mem.snapshots.push_back(
        inspect_snapshot(dir / snapshot_dir_name(step), step, node, job_id, held));
  return mem;
}

}  // namespace wireup::train

namespace wireup::train {
namespace {

std::string blob(const char* key, const std::string& s) {
  return std::string(key) + " " + std::to_string(s.size()) + "\n" + s + "\n";
}

std::string ranks_line(const char* key, const std::vector<int>& ranks) {
  std::string l = key;
  for (int r : ranks) l += " " + std::to_string(r);
  return l + "\n";
}

// The wire text's records, read in order.
struct WireReader {
  const std::string& text;
  std::size_t at = 0;
  std::string& why;

  bool fail(const std::string& what) {
    why = "node memory text at byte " + std::to_string(at) + ": " + what;
    return false;
  }
  bool line(std::vector<std::string>& fields, const std::string& key) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) return fail("expected " + key + ", found the end");
    fields = split(std::string_view(text).substr(at, nl - at), ' ');
    if (fields.empty() || fields[0] != key) return fail("expected " + key);
    at = nl + 1;
    return true;
  }
  bool number(const std::string& key, std::uint64_t max, std::uint64_t& v) {
    std::vector<std::string> f;
    if (!line(f, key)) return false;
    const auto n = f.size() == 2 ? parse_uint(f[1], max) : std::nullopt;
    if (!n) return fail(key + ": expected a number");
    v = *n;
    return true;
  }
  bool text_of(const std::string& key, std::string& out) {
    std::uint64_t n = 0;
    if (!number(key, kMaxSnapshotManifestBytes, n)) return false;
    if (at + n + 1 > text.size() || text[at + n] != '\n') return fail(key + ": cut short");
    out = text.substr(at, n);
    at += n + 1;
    return true;
  }
  bool ranks(const std::string& key, std::vector<int>& out) {
    std::vector<std::string> f;
    if (!line(f, key)) return false;
    for (std::size_t i = 1; i < f.size(); ++i) {
      const auto r = parse_uint(f[i], kMaxSnapshotWorldSize - 1);
      if (!r) return fail(key + ": " + wireup::quoted(f[i]) + " is not a rank");
      out.push_back(static_cast<int>(*r));
    }
    return true;
  }
};

bool parse_snapshot_state(WireReader& r, SnapshotState& s) {
  std::uint64_t step = 0;
  std::string manifest;
  if (!r.number("snapshot", 99999999, step) || !r.text_of("problem", s.problem) ||
      !r.text_of("manifest", manifest) || !r.ranks("parts", s.parts) ||
      !r.ranks("replicas", s.replicas))
    return false;
  s.step = static_cast<std::int64_t>(step);
  if (!manifest.empty()) {
    std::string why;
    s.manifest = parse_snapshot_manifest(manifest, why);
    if (!s.manifest) return r.fail("snapshot " + std::to_string(step) + ": " + why);
  }
  return true;
}

}  // namespace

std::string to_text(const NodeMemory& m) {
  std::string t = "node " + m.node + "\npresent " + (m.present ? "1" : "0") + "\n" +
                  blob("problem", m.problem) + "snapshots " + std::to_string(m.snapshots.size()) +
                  "\n";
  for (const SnapshotState& s : m.snapshots)
    t += "snapshot " + std::to_string(s.step) + "\n" + blob("problem", s.problem) +
         blob("manifest", s.manifest ? to_text(*s.manifest) : std::string()) +
         ranks_line("parts", s.parts) + ranks_line("replicas", s.replicas);
  return t + "end\n";
}

std::optional<NodeMemory> parse_node_memory(const std::string& text, std::string& why) {
  WireReader r{text, 0, why};
  NodeMemory m;
  std::vector<std::string> f;
  std::uint64_t present = 0, n = 0;
  if (!r.line(f, "node")) return std::nullopt;
  if (f.size() != 2 || !is_safe_node_name(f[1])) {
    r.fail("expected node NAME");
    return std::nullopt;
  }
  m.node = f[1];
  if (!r.number("present", 1, present) || !r.text_of("problem", m.problem) ||
      !r.number("snapshots", 1u << 20, n))
    return std::nullopt;
  m.present = present == 1;
  m.snapshots.resize(n);
  for (SnapshotState& s : m.snapshots)
    if (!parse_snapshot_state(r, s)) return std::nullopt;
  if (!r.line(f, "end") || r.at != text.size()) {
    if (why.empty()) r.fail("text after end");
    return std::nullopt;
  }
  return m;
}

}  // namespace wireup::train
