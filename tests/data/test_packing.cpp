// Packing whole documents into windows: the rule on its own (PackPlan), and
// the loader's packed rows over a synthetic chat data set (masked shards).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "fixtures.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/packing.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;
using wireup::test::expected_token;
using wireup::test::expected_trained;

namespace {

std::vector<std::uint64_t> starts_of(const std::vector<std::uint64_t>& lengths) {
  std::vector<std::uint64_t> s = {0};
  for (const auto n : lengths) s.push_back(s.back() + n);
  return s;
}

// Every window within capacity, pieces in stream order and disjoint.
void check_plan_shape(const PackPlan& plan, std::uint64_t capacity) {
  std::uint64_t used = 0;
  for (std::uint64_t w = 0; w < plan.windows(); ++w) {
    std::uint64_t sum = 0;
    const auto pieces = plan.window(w);
    REQUIRE(!pieces.empty());
    for (std::size_t k = 0; k < pieces.size(); ++k) {
      sum += pieces[k].length;
      if (k > 0) CHECK(pieces[k].first >= pieces[k - 1].first + pieces[k - 1].length);
    }
    CHECK(sum <= capacity);
    used += sum;
  }
  CHECK(used == plan.stats().tokens_used);
}

}  // namespace

TEST_CASE("packing places every fitting document whole, exactly once", "[packing]") {
  const std::vector<std::uint64_t> lengths = {5, 3, 8, 1, 4, 4, 2, 7, 6, 1};
  const auto starts = starts_of(lengths);
  const PackPlan plan(starts, 8, Overlong::Truncate);
  check_plan_shape(plan, 8);
  std::multiset<std::pair<std::uint64_t, std::uint64_t>> seen;
  for (std::uint64_t w = 0; w < plan.windows(); ++w)
    for (const auto& p : plan.window(w)) seen.insert({p.first, p.length});
  std::multiset<std::pair<std::uint64_t, std::uint64_t>> want;
  for (std::size_t d = 0; d < lengths.size(); ++d) want.insert({starts[d], lengths[d]});
  CHECK(seen == want);
  CHECK(plan.stats().tokens_used == 41);
  CHECK(plan.stats().windows == 6);  // 41 tokens need ceil(41/8) = 6 windows: optimal here
  CHECK(plan.stats().documents == 10);
  CHECK(plan.stats().truncated == 0);
  // Deterministic: the same input gives the same plan.
  const PackPlan again(starts, 8, Overlong::Truncate);
  REQUIRE(again.windows() == plan.windows());
  for (std::uint64_t w = 0; w < plan.windows(); ++w)
    CHECK(std::vector<PackPiece>(again.window(w).begin(), again.window(w).end()) ==
          std::vector<PackPiece>(plan.window(w).begin(), plan.window(w).end()));
}

TEST_CASE("overlong documents are truncated, split or dropped, and counted", "[packing]") {
  const std::vector<std::uint64_t> lengths = {3, 25, 10, 4};  // 25 > 10, 10 fits exactly
  const auto starts = starts_of(lengths);
  SECTION("truncate") {
    const PackPlan plan(starts, 10, Overlong::Truncate);
    check_plan_shape(plan, 10);
    CHECK(plan.stats().truncated == 1);
    CHECK(plan.stats().tokens_used == 3 + 10 + 10 + 4);
    CHECK(plan.window(0)[0] == PackPiece{3, 10});  // the longest first: doc 1's first 10
  }
  SECTION("split") {
    const PackPlan plan(starts, 10, Overlong::Split);
    check_plan_shape(plan, 10);
    CHECK(plan.stats().split == 1);
    CHECK(plan.stats().tokens_used == 42);  // every token
    std::set<std::uint64_t> firsts;
    for (std::uint64_t w = 0; w < plan.windows(); ++w)
      for (const auto& p : plan.window(w)) firsts.insert(p.first);
    CHECK(firsts == std::set<std::uint64_t>{0, 3, 13, 23, 28, 38});
  }
  SECTION("drop") {
    const PackPlan plan(starts, 10, Overlong::Drop);
    check_plan_shape(plan, 10);
    CHECK(plan.stats().dropped == 1);
    CHECK(plan.stats().tokens_used == 17);
    CHECK(plan.windows() == 2);
  }
  CHECK(parse_overlong("split", "--overlong") == Overlong::Split);
  CHECK_THROWS_WITH(parse_overlong("wrap", "--overlong"),
                    Contains("--overlong 'wrap': expected truncate, split or drop"));
}

TEST_CASE("packing efficiency is at least 95% on a realistic length mix", "[packing]") {
  // Conversation lengths of SFT sets are roughly log-normal: most a few
  // hundred tokens, a long tail of long ones. Median 350 tokens (sigma 1.0:
  // 5% over 1800), and a longer mix; contexts of 2048 and 4096.
  struct Mix {
    double median, sigma;
    std::uint64_t context;
  };
  for (const Mix mix : {Mix{350, 1.0, 2048}, Mix{600, 0.8, 4096}, Mix{200, 1.2, 1024}}) {
    std::mt19937_64 rng(42);
    std::lognormal_distribution<double> len(std::log(mix.median), mix.sigma);
    std::vector<std::uint64_t> lengths;
    for (int i = 0; i < 20000; ++i)
      lengths.push_back(std::max<std::uint64_t>(8, static_cast<std::uint64_t>(len(rng))));
    const auto starts = starts_of(lengths);
    const PackPlan plan(starts, mix.context + 1, Overlong::Truncate);
    check_plan_shape(plan, mix.context + 1);
    const auto& s = plan.stats();
    std::printf(
        "packing: median %.0f sigma %.1f context %llu: %llu documents (%llu truncated) "
        "in %llu windows, efficiency %.4f\n",
        mix.median, mix.sigma, static_cast<unsigned long long>(mix.context),
        static_cast<unsigned long long>(s.documents), static_cast<unsigned long long>(s.truncated),
        static_cast<unsigned long long>(s.windows), s.efficiency());
    CAPTURE(mix.median, mix.sigma, mix.context, s.efficiency());
    CHECK(s.efficiency() >= 0.95);
  }
}

namespace {

LoaderConfig packed_config(const std::filesystem::path& dir) {
  LoaderConfig c;
  c.manifest = dir;
  c.context = 15;  // rows of 16 tokens
  c.batch_size = 2;
  c.seed = 3;
  c.prefetch = 4;
  return c;
}

const std::vector<std::uint64_t> kChatDocs = {5,  9, 16, 3, 12, 7, 30, 4, 8,  2,
                                              11, 6, 16, 1, 9,  5, 13, 4, 10, 3};

// A packed row against the data set: whole documents in stream order, the
// stored mask, segments counting up, padding of EOS (2), untrained.
void check_packed_row(const Batch& b, std::uint64_t i, const std::vector<std::uint64_t>& starts) {
  std::int32_t seg = 0;
  std::uint64_t j = 0;
  while (j < b.cols && b.segments[i * b.cols + j] == seg) {
    const std::uint64_t first_tok = b.token(i, j);  // the stream position (vocab is large)
    const auto doc = std::upper_bound(starts.begin(), starts.end(), first_tok) - starts.begin() - 1;
    const std::uint64_t end = std::min<std::uint64_t>(starts[doc + 1], first_tok + b.cols);
    const bool padding = first_tok != starts[doc];
    if (padding) break;  // padding (EOS = 2) is not a document start here
    for (std::uint64_t t = first_tok; t < end; ++t, ++j) {
      REQUIRE(j < b.cols);
      CHECK(b.token(i, j) == expected_token(t));
      CHECK(b.segments[i * b.cols + j] == seg);
      CHECK(b.loss_mask[i * b.cols + j] == (expected_trained(t, t == starts[doc]) ? 1 : 0));
      if (j > 0)
        CHECK(b.target_trained(i, j - 1) == (t != starts[doc] && expected_trained(t, false)));
    }
    ++seg;
  }
  for (; j < b.cols; ++j) {
    CHECK(b.token(i, j) == 2);
    CHECK(b.loss_mask[i * b.cols + j] == 0);
    CHECK(b.segments[i * b.cols + j] == seg);
  }
}

}  // namespace

TEST_CASE("packed rows hold whole conversations with their masks and segments", "[packing]") {
  test::TempDir dir;
  // The stream starts at 0, and document starts are never 2, so a token
  // equal to its stream position tells a document from padding.
  std::vector<std::uint64_t> docs = {3};
  docs.insert(docs.end(), kChatDocs.begin(), kChatDocs.end());
  test::write_chat_dataset(dir.path(), docs, {4, 6});
  const auto starts = starts_of(docs);
  auto c = packed_config(dir.path());
  TokenLoader loader(c);
  REQUIRE(loader.packed());
  REQUIRE(loader.pack_stats() != nullptr);
  CHECK(loader.pack_stats()->truncated == 1);  // the 30-token one; 16 fits a row exactly
  Batch b;
  std::uint64_t rows = 0;
  while (loader.next(b)) {
    REQUIRE(b.packed());
    REQUIRE(b.loss_mask.size() == b.rows * b.cols);
    for (std::uint64_t i = 0; i < b.rows; ++i, ++rows) check_packed_row(b, i, starts);
  }
  CHECK(rows == loader.windows() / 2 * 2);
}

TEST_CASE("packed loading: ranks disjoint for any world size, resume exact", "[packing]") {
  test::TempDir dir;
  std::vector<std::uint64_t> docs;
  for (int k = 0; k < 6; ++k) docs.insert(docs.end(), kChatDocs.begin(), kChatDocs.end());
  test::write_chat_dataset(dir.path(), docs, {4});
  auto c = packed_config(dir.path());
  c.epochs = 2;
  const std::uint64_t windows = TokenLoader(c).windows();
  REQUIRE(windows > 20);
  for (const std::uint64_t world : {1, 2, 3, 4}) {
    std::multiset<std::uint64_t> first_epoch;
    for (std::uint64_t r = 0; r < world; ++r) {
      auto rc = c;
      rc.rank = r;
      rc.world_size = world;
      rc.epochs = 1;
      TokenLoader loader(rc);
      CHECK(loader.windows() == windows);  // the plan does not depend on ranks
      Batch b;
      while (loader.next(b)) first_epoch.insert(b.windows.begin(), b.windows.end());
    }
    CAPTURE(world);
    CHECK(std::set<std::uint64_t>(first_epoch.begin(), first_epoch.end()).size() ==
          first_epoch.size());
    CHECK(first_epoch.size() == windows / (2 * world) * 2 * world);
  }
  // Resume: seeking to any saved position gives the same batches, masks
  // and segments included, as the uninterrupted run.
  std::vector<Batch> run;
  {
    TokenLoader loader(c);
    Batch b;
    while (loader.next(b)) run.push_back(b);
  }
  REQUIRE(run.size() > 4);
  for (const std::size_t k : {std::size_t{1}, run.size() / 2, run.size() - 1}) {
    TokenLoader resumed(c);
    Batch b;
    resumed.next(b);
    resumed.seek(position_from_json(position_to_json(run[k - 1].after), "ckpt"));
    for (std::size_t i = k; i < run.size(); ++i) {
      REQUIRE(resumed.next(b));
      CHECK(b.windows == run[i].windows);
      CHECK(b.tokens == run[i].tokens);
      CHECK(b.loss_mask == run[i].loss_mask);
      CHECK(b.segments == run[i].segments);
    }
    CHECK_FALSE(resumed.next(b));
  }
}

TEST_CASE("token data sets stay unpacked unless packing is asked for", "[packing]") {
  test::TempDir dir;
  test::write_dataset(dir.path(), {{200}, 9}, {{40}, 9});
  auto c = packed_config(dir.path());
  {
    TokenLoader loader(c);  // Auto: windows at stride T, as always
    CHECK_FALSE(loader.packed());
    CHECK(loader.windows() == window_count(200, 15));
    Batch b;
    REQUIRE(loader.next(b));
    CHECK_FALSE(b.packed());
    CHECK(b.loss_mask.empty());
  }
  c.packing = Packing::On;  // whole documents; no mask stored: every token trained
  TokenLoader loader(c);
  CHECK(loader.packed());
  Batch b;
  REQUIRE(loader.next(b));
  REQUIRE(b.packed());
  for (std::uint64_t j = 0; j < b.cols; ++j)
    if (b.segments[j] == 0) CHECK(b.loss_mask[j] == 1);
}

TEST_CASE("packing that leaves no window is an error naming the manifest", "[packing]") {
  test::TempDir dir;
  test::write_chat_dataset(dir.path(), {40, 50}, {4});
  auto c = packed_config(dir.path());
  c.overlong = Overlong::Drop;
  CHECK_THROWS_WITH(TokenLoader(c), Contains("manifest.json (train split)") &&
                                        Contains("no document is left to pack") &&
                                        Contains("2 dropped"));
}
