#include <catch2/catch.hpp>
#include <set>
#include <tuple>

#include "fixtures.hpp"
#include "wireup/data/batch_source.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;

namespace {

BatchSourceConfig synthetic(std::uint64_t world, std::uint64_t rank, std::uint64_t batch,
                            std::uint64_t accum) {
  BatchSourceConfig c;
  c.context = 16;
  c.batch_size = batch;
  c.world_size = world;
  c.rank = rank;
  c.grad_accum = accum;
  c.seed = 5;
  return c;
}

// (step, seed, first_row .. first_row + batch) of every row this source draws in `steps` steps.
std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> rows_drawn(
    BatchSource& s, const BatchSourceConfig& c, std::uint64_t steps) {
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> rows;
  for (std::uint64_t i = 0; i < steps * c.grad_accum; ++i) {
    const SyntheticDraw d = s.next_synthetic();
    REQUIRE(d.global_rows == c.grad_accum * c.world_size * c.batch_size);
    for (std::uint64_t r = 0; r < c.batch_size; ++r) rows.emplace(d.step, d.seed, d.first_row + r);
  }
  return rows;
}

}  // namespace

TEST_CASE("synthetic draws: every step's global batch, whatever the world size and accumulation",
          "[batch_source]") {
  // 8 rows per step: 1 rank x 8, 2 ranks x 4, 4 ranks x 1 x 2 micro-steps, 2 x 2 x 2.
  const std::tuple<std::uint64_t, std::uint64_t, std::uint64_t> splits[] = {
      {1, 8, 1}, {2, 4, 1}, {4, 1, 2}, {2, 2, 2}};
  std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> first;
  for (const auto& [world, batch, accum] : splits) {
    std::set<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> all;
    for (std::uint64_t rank = 0; rank < world; ++rank) {
      const auto c = synthetic(world, rank, batch, accum);
      BatchSource s(c);
      REQUIRE(s.synthetic());
      for (const auto& row : rows_drawn(s, c, 3)) CHECK(all.insert(row).second);  // disjoint
    }
    CHECK(all.size() == 3 * 8);
    if (first.empty()) first = all;
    CHECK(all == first);
  }
}

TEST_CASE(
    "synthetic position: seek resumes the draws; mid-accumulation and loader positions refused",
    "[batch_source]") {
  const auto c = synthetic(2, 1, 2, 2);
  BatchSource a(c);
  for (int i = 0; i < 4; ++i) a.next_synthetic();
  const std::string at = a.position();
  CHECK(at == "synthetic:4");
  const SyntheticDraw want = a.next_synthetic();
  BatchSource b(c);
  b.seek(at);
  const SyntheticDraw got = b.next_synthetic();
  CHECK(std::tie(got.step, got.micro, got.seed, got.first_row) ==
        std::tie(want.step, want.micro, want.seed, want.first_row));
  CHECK_THROWS_WITH(b.seek("synthetic:3"), Contains("mid-accumulation"));
  CHECK_THROWS_WITH(b.seek("{\"seed\":5}"), Contains("is not for --synthetic_data"));
  b.rewind();
  CHECK(b.position() == "synthetic:0");
  // Validation draws from another seed than training's.
  auto v = c;
  v.split = Split::Validation;
  CHECK(BatchSource(v).next_synthetic().seed != BatchSource(c).next_synthetic().seed);
}

TEST_CASE("loader-backed: the split's loader rows, its position, and rewind to the start",
          "[batch_source]") {
  test::TempDir dir;
  test::write_dataset(dir.path(), {{1000, 2345}, 7}, {{500}, 11});
  BatchSourceConfig c;
  c.dataset = dir.path();
  c.context = 32;
  c.batch_size = 2;
  c.seed = 17;
  BatchSource s(c);
  REQUIRE_FALSE(s.synthetic());
  REQUIRE(s.loader() != nullptr);
  LoaderConfig l;
  l.manifest = dir.path();
  l.context = 32;
  l.batch_size = 2;
  l.seed = 17;
  TokenLoader direct(l);
  Batch x, y;
  std::vector<std::vector<std::uint64_t>> first_windows;
  for (int i = 0; i < 5; ++i) {
    REQUIRE(s.next(x));
    REQUIRE(direct.next(y));
    CHECK(x.windows == y.windows);
    CHECK(x.tokens == y.tokens);
    first_windows.push_back(x.windows);
  }
  const std::string at = s.position();
  REQUIRE(s.next(x));
  const auto after = x.windows;
  BatchSource resumed(c);
  resumed.seek(at);
  REQUIRE(resumed.next(y));
  CHECK(y.windows == after);
  s.rewind();
  REQUIRE(s.next(x));
  CHECK(x.windows == first_windows.front());
  CHECK_THROWS_WITH(resumed.seek("synthetic:0"), Contains("checkpoint data position"));
}

TEST_CASE("a chat data set's batches come packed, with masks and segments", "[batch_source]") {
  test::TempDir dir;
  test::write_chat_dataset(dir.path(), {5, 9, 12, 3, 7, 11, 4, 8, 6, 10, 2, 13}, {4, 6});
  BatchSourceConfig c;
  c.dataset = dir.path();
  c.context = 15;
  c.batch_size = 2;
  c.seed = 1;
  BatchSource train(c);
  REQUIRE(train.loader() != nullptr);
  CHECK(train.loader()->packed());
  Batch b;
  REQUIRE(train.next(b));
  CHECK(b.packed());
  CHECK(b.loss_mask.size() == b.rows * b.cols);
  CHECK(b.segments.size() == b.rows * b.cols);
  c.packing = Packing::Off;  // the trainer may read it unpacked: stride windows, no mask
  BatchSource flat(c);
  REQUIRE(flat.next(b));
  CHECK_FALSE(b.packed());
}
