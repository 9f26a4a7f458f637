#include <catch2/catch.hpp>
#include <set>
#include <vector>

#include "wireup/data/sampler.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;

namespace {

SamplerConfig cfg(std::uint64_t windows, std::uint64_t batch, std::uint64_t rank,
                  std::uint64_t world, std::uint64_t epochs = 1) {
  SamplerConfig c;
  c.windows = windows;
  c.batch_size = batch;
  c.rank = rank;
  c.world_size = world;
  c.epochs = epochs;
  return c;
}

// Every window rank `rank` sees in `epoch` (one epoch, from its start).
std::vector<std::uint64_t> epoch_windows(const SamplerConfig& c, std::uint64_t seed,
                                         std::uint64_t epoch) {
  const Sampler s(c);
  std::vector<std::uint64_t> out;
  Position p{seed, epoch, 0, 0};
  while (auto step = s.next(p)) {
    if (step->epoch != epoch) break;
    out.insert(out.end(), step->windows.begin(), step->windows.end());
    p = step->after;
  }
  return out;
}

}  // namespace

TEST_CASE("ranks read disjoint windows that cover the epoch", "[sampler]") {
  for (const std::uint64_t world : {1, 2, 3, 4}) {
    for (const std::uint64_t windows : {240, 1001}) {
      for (const std::uint64_t batch : {1, 4}) {
        CAPTURE(world, windows, batch);
        std::set<std::uint64_t> all;
        std::uint64_t total = 0;
        std::vector<std::uint64_t> steps;
        for (std::uint64_t r = 0; r < world; ++r) {
          const auto mine = epoch_windows(cfg(windows, batch, r, world, 2), 5, 1);
          steps.push_back(mine.size() / batch);
          total += mine.size();
          for (const auto w : mine) {
            REQUIRE(w < windows);
            all.insert(w);
          }
        }
        CHECK(all.size() == total);  // disjoint
        // All ranks take the same number of steps (collectives stay matched).
        CHECK(std::set<std::uint64_t>(steps.begin(), steps.end()).size() == 1);
        // drop_last: everything but fewer than batch*world windows is covered.
        const std::uint64_t per_step = batch * world;
        CHECK(total == windows / per_step * per_step);
        if (windows % per_step == 0) CHECK(all.size() == windows);
      }
    }
  }
}

TEST_CASE("the windows dropped at the end of an epoch change between epochs", "[sampler]") {
  const auto c = cfg(1001, 1, 0, 4, 3);
  std::set<std::uint64_t> missing_union;
  for (std::uint64_t e = 0; e < 3; ++e) {
    std::set<std::uint64_t> seen;
    for (std::uint64_t r = 0; r < 4; ++r) {
      auto cr = c;
      cr.rank = r;
      for (const auto w : epoch_windows(cr, 3, e)) seen.insert(w);
    }
    CHECK(seen.size() == 1000);
    for (std::uint64_t w = 0; w < 1001; ++w)
      if (seen.count(w) == 0) missing_union.insert(w);
  }
  CHECK(missing_union.size() > 1);
}

TEST_CASE("epochs give different orders; the same seed gives the same order", "[sampler]") {
  const auto c = cfg(500, 2, 1, 3, 3);
  const auto e0 = epoch_windows(c, 11, 0);
  const auto e1 = epoch_windows(c, 11, 1);
  CHECK(e0 != e1);
  CHECK(std::set<std::uint64_t>(e0.begin(), e0.end()) !=
        std::set<std::uint64_t>(e1.begin(), e1.end()));
  CHECK(epoch_windows(c, 11, 0) == e0);
  CHECK(epoch_windows(c, 12, 0) != e0);
  auto ordered = c;
  ordered.shuffle = false;
  const auto plain = epoch_windows(ordered, 11, 0);
  CHECK(plain.front() == 1);  // rank 1 of 3: entries 1, 4 (batch of 2), then 7, 10, ...
  CHECK(plain[1] == 4);
  CHECK(plain[2] == 7);
}

TEST_CASE("a run walks through epochs and stops at epochs or max_steps", "[sampler]") {
  auto c = cfg(100, 5, 0, 2, 3);  // 10 steps per epoch
  const Sampler s(c);
  CHECK(s.steps_per_epoch() == 10);
  Position p{9, 0, 0, 0};
  std::uint64_t steps = 0;
  std::vector<std::uint64_t> epochs;
  while (auto step = s.next(p)) {
    epochs.push_back(step->epoch);
    p = step->after;
    ++steps;
  }
  CHECK(steps == 30);
  CHECK(epochs.front() == 0);
  CHECK(epochs[10] == 1);
  CHECK(epochs.back() == 2);
  CHECK(p.step == 30);

  c.max_steps = 13;
  c.epochs = 0;  // unlimited: max_steps ends it
  const Sampler limited(c);
  p = Position{9, 0, 0, 0};
  steps = 0;
  while (auto step = limited.next(p)) {
    p = step->after;
    ++steps;
  }
  CHECK(steps == 13);
  CHECK(p.epoch == 1);
  CHECK(p.offset == 30);
}

TEST_CASE("a resumed position continues exactly where the run was", "[sampler]") {
  const auto c = cfg(97, 3, 1, 2, 4);
  const Sampler s(c);
  std::vector<std::vector<std::uint64_t>> straight;
  std::vector<Position> positions;
  Position p{21, 0, 0, 0};
  while (auto step = s.next(p)) {
    straight.push_back(step->windows);
    positions.push_back(p);
    p = step->after;
  }
  for (const std::size_t k :
       {std::size_t{0}, std::size_t{7}, std::size_t{15}, std::size_t{16}, straight.size() - 1}) {
    // Through the JSON a checkpoint would store.
    Position q = position_from_json(position_to_json(positions[k]), "ckpt");
    CHECK(q == positions[k]);
    const Sampler fresh(c);
    for (std::size_t i = k; i < straight.size(); ++i) {
      auto step = fresh.next(q);
      REQUIRE(step);
      CHECK(step->windows == straight[i]);
      q = step->after;
    }
    CHECK_FALSE(fresh.next(q));
  }
}

TEST_CASE("advance(p, k) is where k calls of next() from p lead", "[sampler]") {
  // The prefetch threads claim step k of a run as advance(start, k): it
  // must agree with stepping through next() everywhere, epoch ends, limits
  // and positions from another world size (offsets off the step grid) included.
  struct Case {
    SamplerConfig c;
    Position start;
  };
  std::vector<Case> cases;
  for (const std::uint64_t max_steps : {0, 1, 7, 23}) {
    for (const std::uint64_t epochs : {0, 1, 3}) {
      if (epochs == 0 && max_steps == 0) continue;  // endless: checked below with a bound
      auto c = cfg(50, 3, 1, 2, epochs);            // 8 steps per epoch, 2 windows left over
      c.max_steps = max_steps;
      for (const Position& p :
           {Position{5, 0, 0, 0}, Position{5, 0, 6, 2}, Position{5, 1, 45, 9},
            Position{5, 0, 47, 3}, Position{5, 0, 49, 4}, Position{5, 2, 60, 1}})
        cases.push_back({c, p});
    }
  }
  auto endless = cfg(10, 1, 0, 1, 0);  // 10 steps per epoch, nothing left over
  cases.push_back({endless, Position{1, 0, 0, 0}});
  cases.push_back({endless, Position{1, 4, 3, 100}});
  for (const auto& [c, start] : cases) {
    CAPTURE(c.epochs, c.max_steps, start.epoch, start.offset, start.step);
    const Sampler s(c);
    Position p = start;
    for (std::uint64_t k = 0; k <= 100; ++k) {
      CAPTURE(k);
      const auto jumped = s.advance(start, k);
      REQUIRE(jumped.has_value());
      REQUIRE(*jumped == p);
      const auto step = s.next(p);
      if (!step) {
        // The end: no position k+1 (or any later) steps away.
        CHECK_FALSE(s.advance(start, k + 1));
        CHECK_FALSE(s.advance(start, k + 1000));
        break;
      }
      // next() into a reused Step gives the same step.
      Sampler::Step reused;
      reused.windows.assign(17, 99);
      REQUIRE(s.next(p, reused));
      CHECK(reused.windows == step->windows);
      CHECK(reused.after == step->after);
      CHECK(reused.epoch == step->epoch);
      p = step->after;
    }
  }
}

TEST_CASE("next_many and peek give what next() gives", "[sampler]") {
  // The loader takes its steps from next_many (in chunks) and reads the next
  // step's first windows ahead through peek: both must be next() exactly,
  // across epoch ends, limits and unshuffled runs.
  for (const std::uint64_t max_steps : {0, 7, 23}) {
    for (const bool shuffle : {true, false}) {
      auto c = cfg(50, 3, 1, 2, 3);  // 8 steps per epoch, 3 epochs
      c.max_steps = max_steps;
      c.shuffle = shuffle;
      const Sampler s(c);
      for (const Position& start :
           {Position{5, 0, 0, 0}, Position{5, 0, 47, 3}, Position{5, 1, 6, 9}}) {
        for (const std::size_t chunk : {1, 5, 32, 200}) {
          CAPTURE(max_steps, shuffle, start.epoch, start.offset, chunk);
          std::vector<Sampler::Step> many(2);  // reused storage of another shape
          many[0].windows.assign(9, 1);
          const std::size_t n = s.next_many(start, chunk, many);
          Position p = start;
          std::size_t k = 0;
          for (; k < chunk; ++k) {
            const auto step = s.next(p);
            std::uint64_t head[5] = {};
            const std::size_t peeked = s.peek(p, 5, head);
            if (!step) {
              CHECK(peeked == 0);
              break;
            }
            REQUIRE(k < n);
            CHECK(many[k].windows == step->windows);
            CHECK(many[k].after == step->after);
            CHECK(many[k].epoch == step->epoch);
            REQUIRE(peeked == 3);  // at most batch_size
            CHECK(std::vector<std::uint64_t>(head, head + 3) == step->windows);
            p = step->after;
          }
          CHECK(n == k);
        }
      }
    }
  }
}

TEST_CASE("sampler configuration errors", "[sampler]") {
  CHECK_THROWS_WITH(Sampler(cfg(10, 4, 0, 3)), Contains("10 windows cannot fill one step"));
  CHECK_THROWS_WITH(Sampler(cfg(10, 1, 3, 3)), Contains("rank 3 is outside world size 3"));
  CHECK_THROWS_AS(Sampler(cfg(10, 0, 0, 1)), InputError);
  CHECK_THROWS_WITH(position_from_json("{\"seed\":1}", "ck.json"),
                    Contains("ck.json") && Contains("'version'"));
  CHECK_THROWS_WITH(position_from_json("nope", "ck.json"), Contains("not valid JSON"));
  CHECK_THROWS_WITH(position_from_json("{\"seed\": 1e999999}", "ck.json"),
                    Contains("ck.json") && Contains("not valid JSON"));
}
