#include "checkpoint/memory_snapshot_part.hpp"

#include <algorithm>
#include <exception>
#include <limits>

#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/memory_snapshot_dir.hpp"
#include "wireup/crc32c.hpp"
#include "wireup/file_io.hpp"
#include "wireup/text.hpp"

namespace wireup::train {
namespace {

constexpr const char* kMagic = "wireup-memory-part 2";
constexpr std::uint64_t kMaxHeaderBytes = 64ull << 20;
constexpr auto kMaxCount = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// The header's lines, read in order from the part's first bytes.
struct HeaderReader {
  const char* bytes;
  std::uint64_t size;
  std::uint64_t at = 0;
  int line = 0;
  std::string& why;

  bool fail(const std::string& what) {
    why = "line " + std::to_string(line) + ": " + what;
    return false;
  }
  bool next(std::string& out) {
    ++line;
    const std::uint64_t end = std::min(size, kMaxHeaderBytes);
    const char* nl = std::find(bytes + at, bytes + end, '\n');
    if (nl == bytes + end) return fail("cut short (no newline)");
    out.assign(bytes + at, nl);
    at = static_cast<std::uint64_t>(nl - bytes) + 1;
    return true;
  }
  bool number(const std::string& key, std::uint64_t max, std::uint64_t& v) {
    std::string l;
    if (!next(l)) return false;
    const auto f = split(l, ' ');
    const auto n = f.size() == 2 && f[0] == key ? parse_uint(f[1], max) : std::nullopt;
    if (!n) return fail("expected " + key + " N (at most " + std::to_string(max) + ")");
    v = *n;
    return true;
  }
  // LEN bytes and a newline after the "KEY LEN" line.
  bool blob(const std::string& key, std::string& out) {
    std::uint64_t n = 0;
    if (!number(key, kMaxHeaderBytes, n)) return false;
    if (at + n + 1 > size || bytes[at + n] != '\n') return fail(key + ": cut short");
    out.assign(bytes + at, n);
    at += n + 1;
    ++line;
    return true;
  }
  bool unit(PartUnit& u) {
    std::string l;
    if (!next(l)) return false;
    const auto f = split(l, ' ');
    if (f.size() != 6 || f[0] != "unit" || f[1].empty() || f[2] != "offset" || f[4] != "numel")
      return fail("expected unit NAME offset O numel N");
    const auto o = parse_uint(f[3], kMaxCount),
               n = parse_uint(f[5], kMaxCount / (4 * kMaxUnitTensors));
    if (!o || !n) return fail("unit " + f[1] + ": offset and numel must be numbers");
    u = {f[1], static_cast<std::int64_t>(*o), static_cast<std::int64_t>(*n)};
    return true;
  }
  // "tensors N NAME...": the names of a unit's state.
  bool tensors(std::vector<std::string>& out) {
    std::string l;
    if (!next(l)) return false;
    auto f = split(l, ' ');
    const auto n =
        f.size() >= 2 && f[0] == "tensors" ? parse_uint(f[1], kMaxUnitTensors) : std::nullopt;
    if (!n || f.size() != *n + 2) return fail("expected tensors N NAME...");
    out.assign(f.begin() + 2, f.end());
    const std::string bad = unit_tensors_problem(out);
    return bad.empty() || fail(bad);
  }
};

bool parse_fields(HeaderReader& r, PartHeader& h) {
  std::string l;
  if (!r.next(l)) return false;
  if (l != kMagic)
    return r.fail("not a memory snapshot part (expected \"" + std::string(kMagic) + "\")");
  std::uint64_t step = 0, opt = 0, world = 0, rank = 0, units = 0;
  if (!r.number("step", kMaxCount, step) || !r.number("optimizer_steps", kMaxCount, opt) ||
      !r.number("world_size", 1u << 20, world) || !r.number("rank", (1u << 20) - 1, rank) ||
      !r.blob("data_position", h.data_position) || !r.tensors(h.tensors) ||
      !r.number("units", 1u << 20, units))
    return false;
  if (world == 0 || rank >= world)
    return r.fail("rank " + std::to_string(rank) + " of world " + std::to_string(world));
  h.step = static_cast<std::int64_t>(step);
  h.optimizer_steps = static_cast<std::int64_t>(opt);
  h.world_size = static_cast<int>(world);
  h.rank = static_cast<int>(rank);
  h.units.resize(units);
  for (PartUnit& u : h.units)
    if (!r.unit(u)) return false;
  if (!r.next(l)) return false;
  return l == "end" || r.fail("expected end");
}

}  // namespace

std::uint64_t PartHeader::tensor_bytes() const {
  std::uint64_t n = 0;
  for (const PartUnit& u : units) n += tensors.size() * 4 * static_cast<std::uint64_t>(u.numel);
  return n;
}

std::string to_text(const PartHeader& h) {
  std::string t = std::string(kMagic) + "\nstep " + std::to_string(h.step) + "\noptimizer_steps " +
                  std::to_string(h.optimizer_steps) + "\nworld_size " +
                  std::to_string(h.world_size) + "\nrank " + std::to_string(h.rank) +
                  "\ndata_position " + std::to_string(h.data_position.size()) + "\n" +
                  h.data_position + "\ntensors " + std::to_string(h.tensors.size());
  for (const std::string& name : h.tensors) t += " " + name;
  t += "\nunits " + std::to_string(h.units.size()) + "\n";
  for (const PartUnit& u : h.units)
    t += "unit " + u.name + " offset " + std::to_string(u.offset) + " numel " +
         std::to_string(u.numel) + "\n";
  return t + "end\n";
}

std::optional<PartHeader> parse_part_header(const char* bytes, std::uint64_t size,
                                            std::uint64_t& header_bytes, std::string& why) {
  PartHeader h;
  HeaderReader r{bytes, size, 0, 0, why};
  if (!parse_fields(r, h)) return std::nullopt;
  if (size - r.at != h.tensor_bytes()) {
    why =
        std::to_string(size) + " bytes, the header says " + std::to_string(r.at + h.tensor_bytes());
    return std::nullopt;
  }
  header_bytes = r.at;
  return h;
}

std::string part_layout_mismatch(const PartHeader& saved, const PartHeader& mine) {
  if (saved.world_size != mine.world_size || saved.rank != mine.rank)
    return "rank " + std::to_string(saved.rank) + " of world " + std::to_string(saved.world_size) +
           ", this run rank " + std::to_string(mine.rank) + " of world " +
           std::to_string(mine.world_size);
  if (saved.tensors != mine.tensors) {
    std::string a, b;
    for (const auto& n : saved.tensors) a += " " + n;
    for (const auto& n : mine.tensors) b += " " + n;
    return "tensors" + a + ", this run" + b;
  }
  if (saved.units.size() != mine.units.size())
    return std::to_string(saved.units.size()) + " units, this run " +
           std::to_string(mine.units.size());
  for (std::size_t i = 0; i < mine.units.size(); ++i) {
    const PartUnit &a = saved.units[i], &b = mine.units[i];
    if (a.name != b.name || a.offset != b.offset || a.numel != b.numel)
      return "unit " + a.name + ": offset " + std::to_string(a.offset) + " numel " +
             std::to_string(a.numel) + ", this run " + b.name + " offset " +
             std::to_string(b.offset) + " numel " + std::to_string(b.numel);
  }
  return "";
}

std::string part_bytes_problem(const char* bytes, std::uint64_t size,
                               const SnapshotPart& expected) {
  if (size != expected.bytes)
    return std::to_string(size) + " bytes, the manifest says " + std::to_string(expected.bytes);
  const std::string sum = wireup::crc32c_quarters_hex(bytes, static_cast<std::size_t>(size));
  if (sum != expected.checksum)
    return "fails its checksum: crc32c " + sum + ", the manifest says " + expected.checksum;
  return "";
}

std::string read_checked_part(const std::filesystem::path& path, const SnapshotPart& expected,
                              std::string& why) {
  why.clear();
  std::string part;
  try {
    part = read_private_text(path, expected.bytes, why).value_or("");
  } catch (const std::exception& e) {  // an I/O error: this source fails, the next is tried
    why = e.what();
  }
  if (why.empty()) why = part_bytes_problem(part.data(), part.size(), expected);
  if (why.empty()) return part;
  why = io::shown(path) + ": " + why;
  return "";
}

std::string replica_size_problem(std::int64_t size, const SnapshotPart& expected) {
  if (size > 0 && static_cast<std::uint64_t>(size) == expected.bytes) return "";
  return "announced " + std::to_string(size) + " bytes, the manifest says " +
         std::to_string(expected.bytes);
}

}  // namespace wireup::train
