// The loader's pair mode on a preference data set written by wireup-prep
// (text pairs, the real Llama 3 vocabulary): every row's segments come in
// (chosen, rejected) pairs of one pair, kept by keep_start; masks cover the
// completions only; long pairs cut, pairs whose prompts fill a row dropped
// and counted; seek gives the same batches; ranks read disjoint pairs; the
// validation split; the settings that do not apply to pairs refused by name.
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "prep_fixtures.hpp"
#include "tokenizer_fixtures.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"
#include "wireup/prep/prep.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kContext = 40;  // rows of 41 tokens

std::string words(const std::string& word, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += " " + word;
  return s;
}

// 30 short pairs (two or more to a row), 6 with long completions (cut to a
// row), 3 whose prompts alone take more than half a row (dropped).
std::vector<std::string> rows() {
  std::vector<std::string> r;
  for (int i = 0; i < 39; ++i) {
    std::string prompt = "Question " + std::to_string(i) + ":", chosen = " yes",
                rejected = " no, not at all";
    if (i % 13 == 5) prompt += words("the", 20);
    if (i % 13 == 2 || i % 13 == 8) chosen = words("the", 25), rejected = words("a", 15);
    r.push_back(R"({"prompt": ")" + prompt + R"(", "chosen": ")" + chosen + R"(", "rejected": ")" +
                rejected + R"("})");
  }
  return r;
}

struct Doc {
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> mask;
  std::uint64_t prompt() const {  // tokens before the first mask bit
    std::uint64_t p = 0;
    while (p < mask.size() && mask[p] == 0) ++p;
    return p;
  }
};
struct Pair {
  Doc chosen, rejected;
};

// A split's pairs, in stream order, as the shards hold them.
std::vector<Pair> pairs_of(const fs::path& dir, const data::SplitEntry& split) {
  std::vector<Pair> pairs;
  for (const auto& s : split.shards) {
    const data::ShardFile f(dir / s.file, data::ReadMode::Pread);
    const auto offsets = f.doc_offsets();
    std::vector<Doc> docs;
    for (std::size_t d = 0; d + 1 < offsets.size(); ++d) {
      Doc doc;
      doc.ids.resize(offsets[d + 1] - offsets[d]);
      doc.mask.resize(doc.ids.size());
      f.read_tokens(offsets[d], doc.ids.size(), doc.ids.data());
      f.read_mask(offsets[d], doc.mask.size(), doc.mask.data());
      docs.push_back(std::move(doc));
    }
    for (std::size_t d = 0; d + 1 < docs.size(); d += 2) pairs.push_back({docs[d], docs[d + 1]});
  }
  return pairs;
}

bool starts_with(const std::vector<std::uint32_t>& whole, const std::vector<std::uint32_t>& head) {
  return head.size() <= whole.size() && std::equal(head.begin(), head.end(), whole.begin());
}

// Row i's segment `seg`: its first column and its tokens.
std::pair<std::uint64_t, std::vector<std::uint32_t>> segment(const data::Batch& b, std::uint64_t i,
                                                             std::int32_t seg) {
  std::uint64_t at = 0;
  while (at < b.cols && b.segments[i * b.cols + at] != seg) ++at;
  std::vector<std::uint32_t> ids;
  for (std::uint64_t j = at; j < b.cols && b.segments[i * b.cols + j] == seg; ++j)
    ids.push_back(b.token(i, j));
  return {at, ids};
}

// Checks one side of a pair in row i: a prefix of `doc` with its mask, the
// targets trained exactly on the completion's tokens, at least one of them.
void check_side(const data::Batch& b, std::uint64_t i, std::uint64_t at, std::size_t n,
                const Doc& doc) {
  std::uint64_t trained = 0;
  for (std::size_t k = 0; k < n; ++k) {
    CHECK(b.loss_mask[i * b.cols + at + k] == doc.mask[k]);
    CHECK(doc.mask[k] == (k >= doc.prompt() ? 1 : 0));  // prep: the completion's tokens
    if (k > 0) {
      CHECK(b.target_trained(i, at + k - 1) == (doc.mask[k] == 1));
      trained += b.target_trained(i, at + k - 1);
    }
  }
  if (at + n < b.cols) CHECK_FALSE(b.target_trained(i, at + n - 1));  // never across segments
  CHECK(trained > 0);
}

// Every row of `b`: pairs of segments, each a pair of `pairs` kept by keep_start.
// Returns the pair index of each pair read, in row order.
std::vector<std::size_t> check_rows(const data::Batch& b, const std::vector<Pair>& pairs) {
  std::vector<std::size_t> read;
  REQUIRE(b.paired());
  REQUIRE(b.pairs.size() == b.rows);
  for (std::uint64_t i = 0; i < b.rows; ++i) {
    CAPTURE(i, b.windows[i]);
    const std::uint32_t n = b.pairs[i];
    REQUIRE(n >= 1);
    std::uint64_t used = 0;
    for (std::uint32_t p = 0; p < n; ++p) {
      const auto [c_at, c_ids] = segment(b, i, data::Batch::chosen_segment(p));
      const auto [r_at, r_ids] = segment(b, i, data::Batch::rejected_segment(p));
      REQUIRE(!c_ids.empty());
      REQUIRE(r_at == c_at + c_ids.size());  // rejected right after its chosen
      std::size_t found = pairs.size();
      for (std::size_t k = 0; k < pairs.size(); ++k)
        if (starts_with(pairs[k].chosen.ids, c_ids) && starts_with(pairs[k].rejected.ids, r_ids) &&
            c_ids.size() > pairs[k].chosen.prompt())
          found = k;
      REQUIRE(found < pairs.size());
      const Pair& pair = pairs[found];
      check_side(b, i, c_at, c_ids.size(), pair.chosen);
      check_side(b, i, r_at, r_ids.size(), pair.rejected);
      const bool cut =
          c_ids.size() < pair.chosen.ids.size() || r_ids.size() < pair.rejected.ids.size();
      if (cut) CHECK((n == 1 && c_ids.size() + r_ids.size() == b.cols));  // fills its row
      used += c_ids.size() + r_ids.size();
      read.push_back(found);
    }
    for (std::uint64_t j = used; j < b.cols; ++j) {  // padding: one more segment, untrained
      CHECK(b.segments[i * b.cols + j] == static_cast<std::int32_t>(2 * n));
      CHECK(b.loss_mask[i * b.cols + j] == 0);
    }
  }
  return read;
}

data::LoaderConfig config(const fs::path& dir) {
  data::LoaderConfig c;
  c.manifest = dir;
  c.context = kContext;
  c.batch_size = 1;
  c.seed = 7;
  c.prefetch = 4;
  return c;
}

struct Expected {
  std::uint64_t truncated = 0, dropped = 0;
};
Expected expected(const std::vector<Pair>& pairs) {
  Expected e;
  for (const auto& p : pairs) {
    if (p.chosen.ids.size() + p.rejected.ids.size() <= kContext + 1) continue;
    if (p.chosen.prompt() + p.rejected.prompt() + 2 > kContext + 1)
      ++e.dropped;
    else
      ++e.truncated;
  }
  return e;
}

}  // namespace

TEST_CASE("pair mode reads a wireup-prep preference data set", "[preference_loader]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  test::write_rows(dir / "in" / "pairs.jsonl", rows());
  prep::PrepOptions o;
  o.inputs = {(dir / "in").string()};
  o.output = dir / "out";
  o.tokenizer = test::vocab_file("llama3.tiktoken");
  o.validation_fraction = 0.2;
  o.shard_tokens = 200;  // several shards
  o.threads = 2;
  o.progress = false;
  const auto m = prep::run_prep(o);
  REQUIRE(m.train.shards.size() > 2);
  REQUIRE(!m.validation.shards.empty());
  const auto train_pairs = pairs_of(dir / "out", m.train);
  const auto want = expected(train_pairs);
  REQUIRE(want.truncated > 0);  // the data exercise both rules
  REQUIRE(want.dropped > 0);

  SECTION("one epoch: every pair not dropped exactly once, the counts") {
    data::TokenLoader loader(config(dir / "out"));
    CHECK(loader.paired());
    CHECK(loader.packed());
    const data::PackStats& s = *loader.pack_stats();
    CHECK(s.pairs == train_pairs.size());
    CHECK(s.documents == 2 * train_pairs.size());
    CHECK(s.truncated_pairs == want.truncated);
    CHECK(s.dropped_pairs == want.dropped);
    std::multiset<std::size_t> seen;
    data::Batch b;
    bool several = false;
    while (loader.next(b)) {
      for (const auto k : check_rows(b, train_pairs)) seen.insert(k);
      several = several || b.pairs[0] > 1;
    }
    CHECK(several);  // short pairs share rows
    CHECK(seen.size() == train_pairs.size() - want.dropped);
    CHECK(std::set<std::size_t>(seen.begin(), seen.end()).size() == seen.size());
  }

  SECTION("seek gives the same batches") {
    auto c = config(dir / "out");
    c.batch_size = 2;
    c.epochs = 3;
    data::TokenLoader a(c);
    data::Batch b;
    for (int i = 0; i < 3; ++i) REQUIRE(a.next(b));
    const data::Position p = a.position();
    std::vector<data::Batch> after;
    for (int i = 0; i < 6; ++i) {
      REQUIRE(a.next(b));
      check_rows(b, train_pairs);
      after.push_back(b);
    }
    data::TokenLoader resumed(c);
    resumed.seek(p);
    for (const auto& w : after) {
      REQUIRE(resumed.next(b));
      CHECK(b.windows == w.windows);
      CHECK(b.tokens == w.tokens);
      CHECK(b.loss_mask == w.loss_mask);
      CHECK(b.segments == w.segments);
      CHECK(b.pairs == w.pairs);
    }
  }

  SECTION("world 2: the ranks read disjoint pairs") {
    std::vector<std::set<std::size_t>> by_rank(2);
    std::set<std::uint64_t> windows;
    std::uint64_t rows = 0;
    for (std::uint64_t r = 0; r < 2; ++r) {
      auto c = config(dir / "out");
      c.rank = r;
      c.world_size = 2;
      data::TokenLoader loader(c);
      data::Batch b;
      while (loader.next(b)) {
        for (const auto k : check_rows(b, train_pairs)) CHECK(by_rank[r].insert(k).second);
        windows.insert(b.windows.begin(), b.windows.end());
        rows += b.rows;
      }
    }
    CHECK(rows > 2);
    CHECK(windows.size() == rows);
    for (const auto k : by_rank[0]) CHECK(by_rank[1].count(k) == 0);
  }

  SECTION("the validation split, in order") {
    const auto val_pairs = pairs_of(dir / "out", m.validation);
    auto c = config(dir / "out");
    c.split = data::Split::Validation;
    c.shuffle = false;
    data::TokenLoader loader(c);
    CHECK(loader.pack_stats()->pairs == val_pairs.size());
    data::Batch b;
    std::set<std::size_t> seen;
    while (loader.next(b))
      for (const auto k : check_rows(b, val_pairs)) seen.insert(k);
    CHECK(seen.size() == val_pairs.size() - expected(val_pairs).dropped);
  }

  SECTION("overlong drop leaves out every long pair") {
    auto c = config(dir / "out");
    c.overlong = data::Overlong::Drop;
    data::TokenLoader loader(c);
    CHECK(loader.pack_stats()->dropped_pairs == want.truncated + want.dropped);
    CHECK(loader.pack_stats()->truncated_pairs == 0);
  }

  SECTION("settings that do not apply to pairs are refused, naming the data set") {
    auto c = config(dir / "out");
    c.overlong = data::Overlong::Split;
    CHECK_THROWS_AS(data::TokenLoader(c), InputError);
    CHECK_THROWS_WITH(data::TokenLoader(c), Contains((dir / "out" / "manifest.json").string()) &&
                                                Contains("a preference data set") &&
                                                Contains("overlong split") &&
                                                Contains("expected overlong truncate"));
    c.overlong = data::Overlong::Truncate;
    c.packing = data::Packing::Off;
    CHECK_THROWS_WITH(data::TokenLoader(c),
                      Contains("a preference data set") && Contains("packing off"));
    c.packing = data::Packing::On;  // packing on is pair mode too
    CHECK(data::TokenLoader(c).paired());
    // A row too small for any pair's prompts: nothing to read, said by name.
    c.packing = data::Packing::Auto;
    c.context = 8;
    CHECK_THROWS_WITH(data::TokenLoader(c),
                      Contains("(train split): no pair is left") && Contains("pairs dropped"));
  }
}
