// A rank's part's header (what a memory snapshot's rank-N.bin starts with)
// and what a node found as text for the ranks' gather: written, read back,
// and refused when cut short or when they do not fit (no files, no Torch).
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>

#include "checkpoint/memory_snapshot_manifest.hpp"
#include "checkpoint/memory_snapshot_part.hpp"
#include "wireup/crc32c.hpp"

using namespace wireup::train;
using Catch::Matchers::Contains;

namespace {

PartHeader header() {
  PartHeader h;
  h.step = 40;
  h.optimizer_steps = 38;
  h.world_size = 4;
  h.rank = 2;
  h.data_position = "wireup-position 1\nepoch 0\nline with spaces\n";
  h.tensors = {"param", "exp_avg", "exp_avg_sq"};
  h.units = {{"embed", 0, 1024}, {"layers.0", 512, 256}};
  return h;
}

// A whole part: the header's text, then zeroed tensors.
std::string part(const PartHeader& h) { return to_text(h) + std::string(h.tensor_bytes(), '\0'); }

}  // namespace

TEST_CASE("a part's header reads back, the tensors start after it") {
  const PartHeader h = header();
  const std::string p = part(h);
  std::uint64_t at = 0;
  std::string why;
  const auto back = parse_part_header(p.data(), p.size(), at, why);
  REQUIRE(back);
  CHECK(at == to_text(h).size());
  CHECK(back->step == 40);
  CHECK(back->optimizer_steps == 38);
  CHECK(back->data_position == h.data_position);  // newlines inside survive
  CHECK(part_layout_mismatch(*back, h).empty());
  CHECK(h.tensor_bytes() == 3 * 4 * (1024 + 256));
  CHECK(back->tensors == h.tensors);
}

TEST_CASE("a part's tensors are named, and their count sizes it") {
  PartHeader h = header();
  h.tensors = {"param", "exp_avg", "exp_avg_sq", "router_bias"};  // one more piece of state
  const std::string p = part(h);
  CHECK(h.tensor_bytes() == 4 * 4 * (1024 + 256));
  std::uint64_t at = 0;
  std::string why;
  const auto back = parse_part_header(p.data(), p.size(), at, why);
  REQUIRE(back);
  CHECK(back->tensors == h.tensors);
  CHECK_THAT(part_layout_mismatch(*back, header()),
             Contains("tensors param exp_avg exp_avg_sq router_bias, this run param exp_avg "
                      "exp_avg_sq"));
  for (const auto& [from, to, reason] :
       {std::tuple<std::string, std::string, std::string>{"tensors 4 ", "tensors 5 ",
                                                          "expected tensors N NAME"},
        {"tensors 4 param", "tensors 4 PARAM", "expected 1-32 of [a-z0-9_]"},
        {"exp_avg_sq router_bias", "exp_avg_sq exp_avg", "named twice"},
        {"tensors 4 ", "tensors 17 ", "expected tensors N NAME"}}) {
    std::string bad = p;
    bad.replace(bad.find(from), from.size(), to);
    CHECK_FALSE(parse_part_header(bad.data(), bad.size(), at, why));
    CHECK_THAT(why, Contains(reason));
  }
}

TEST_CASE("a part cut short, padded or not a part is refused with the reason") {
  const PartHeader h = header();
  const std::string p = part(h);
  std::uint64_t at = 0;
  std::string why;
  CHECK_FALSE(parse_part_header(p.data(), p.size() - 1, at, why));
  CHECK_THAT(why, Contains("bytes, the header says"));
  const std::string longer = p + "x";
  CHECK_FALSE(parse_part_header(longer.data(), longer.size(), at, why));
  const std::string text = to_text(h);
  CHECK_FALSE(parse_part_header(text.data(), 30, at, why));  // the header itself cut
  CHECK_THAT(why, Contains("line"));
  const std::string other = "wireup-checkpoint 1\n";
  CHECK_FALSE(parse_part_header(other.data(), other.size(), at, why));
  CHECK_THAT(why, Contains("not a memory snapshot part"));
  std::string bad = p;
  bad.replace(bad.find("rank 2"), 6, "rank 9");  // rank outside the world
  CHECK_FALSE(parse_part_header(bad.data(), bad.size(), at, why));
  CHECK_THAT(why, Contains("rank 9 of world 4"));
}

TEST_CASE("a part of another layout is named") {
  const PartHeader h = header();
  PartHeader other = h;
  other.units[1].offset = 0;
  CHECK_THAT(part_layout_mismatch(h, other), Contains("unit layers.0: offset 512 numel 256"));
  other = h;
  other.world_size = 2;
  other.rank = 0;
  CHECK_THAT(part_layout_mismatch(h, other),
             Contains("rank 2 of world 4, this run rank 0 of world 2"));
  other = h;
  other.units.pop_back();
  CHECK_THAT(part_layout_mismatch(h, other), Contains("2 units, this run 1"));
}

TEST_CASE("what a node found travels as text and back") {
  SnapshotManifest m{"42", 1000, 40, {"a1", "a1", "a2", "a2"}, {}, {}, {}};
  for (int r = 0; r < 4; ++r) m.parts.push_back({r, m.rank_node[r], 64, std::string(32, 'a')});
  m.replicas.push_back({2, "a1", 64, std::string(32, 'a')});
  NodeMemory n{"a1", true, "", {}};
  n.snapshots.push_back({40, "", m, {0, 1}, {2}});
  n.snapshots.push_back(
      {30, "part of rank 1 (rank-00001.bin) fails its checksum", std::nullopt, {0}, {}});
  std::string why;
  const auto back = parse_node_memory(to_text(n), why);
  REQUIRE(back);
  CHECK(back->node == "a1");
  CHECK(back->present);
  REQUIRE(back->snapshots.size() == 2);
  CHECK(back->snapshots[0].manifest);
  CHECK(to_text(*back->snapshots[0].manifest) == to_text(m));
  CHECK(back->snapshots[0].parts == std::vector<int>{0, 1});
  CHECK(back->snapshots[0].replicas == std::vector<int>{2});
  CHECK(back->snapshots[1].problem == n.snapshots[1].problem);
  CHECK_FALSE(back->snapshots[1].manifest);
  CHECK(to_text(*back) == to_text(n));

  const NodeMemory gone{"a3", false, "", {}};
  const auto missing = parse_node_memory(to_text(gone), why);
  REQUIRE(missing);
  CHECK_FALSE(missing->present);

  const std::string t = to_text(n);
  CHECK_FALSE(parse_node_memory(t.substr(0, t.size() / 2), why));
  CHECK_FALSE(parse_node_memory(t + "more\n", why));
  CHECK_FALSE(parse_node_memory("node ../x\n", why));
  CHECK_THAT(why, Contains("expected node NAME"));
}

// A replica received from a peer is bytes from a socket anyone who reaches the
// job's ports can write to: its announced size must be the manifest's before
// anything is allocated, and its bytes must have the manifest's checksum.
TEST_CASE("a corrupted replica stream is refused: a bad size, flipped bytes, cut short") {
  const std::string sent = part(header());
  const SnapshotPart want{2, "a2", sent.size(),
                          wireup::crc32c_quarters_hex(sent.data(), sent.size())};
  const auto n = static_cast<std::int64_t>(sent.size());
  CHECK(replica_size_problem(n, want).empty());
  CHECK(part_bytes_problem(sent.data(), sent.size(), want).empty());
  SECTION("a negative, zero, other or huge size: refused, naming both") {
    CHECK(replica_size_problem(-1, want) ==
          "announced -1 bytes, the manifest says " + std::to_string(sent.size()));
    CHECK_FALSE(replica_size_problem(0, want).empty());
    CHECK_FALSE(replica_size_problem(n + 1, want).empty());
    CHECK_FALSE(replica_size_problem(n - 1, want).empty());
    CHECK_FALSE(replica_size_problem(std::numeric_limits<std::int64_t>::max(), want).empty());
    CHECK_FALSE(replica_size_problem(std::numeric_limits<std::int64_t>::min(), want).empty());
  }
  SECTION("any one byte flipped, header or tensors: fails its checksum") {
    for (const std::size_t at : {std::size_t{0}, sent.size() / 2, sent.size() - 1}) {
      std::string got = sent;
      got[at] = static_cast<char>(got[at] ^ 0x40);
      CHECK_THAT(part_bytes_problem(got.data(), got.size(), want),
                 Contains("fails its checksum: crc32c ") &&
                     Contains("the manifest says " + want.checksum));
    }
  }
  SECTION("a forged header with the right size but other bytes: fails its checksum") {
    PartHeader h = header();
    h.step = 41;  // same length, another step
    const std::string forged = part(h);
    REQUIRE(forged.size() == sent.size());
    CHECK_THAT(part_bytes_problem(forged.data(), forged.size(), want),
               Contains("fails its checksum"));
  }
  SECTION("cut short: refused by its size") {
    CHECK(part_bytes_problem(sent.data(), sent.size() - 4, want) ==
          std::to_string(sent.size() - 4) + " bytes, the manifest says " +
              std::to_string(sent.size()));
  }
}
