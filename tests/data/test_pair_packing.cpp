// Pair mode's rules on their own (no files): how one pair is cut to a row
// (cut_pair: keep_start, fair between both sides, dropped when a side keeps
// no trained target) and how pairs are packed (PackPlan::for_pairs: both
// documents of a pair in one window, chosen then rejected, counted).
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <stdexcept>

#include "wireup/data/packing.hpp"

using namespace wireup::data;

namespace {

// A pair starting at `first`: prompts of `prompt` tokens on both sides.
PackPair pair_of(std::uint64_t first, std::uint64_t prompt, std::uint64_t chosen_completion,
                 std::uint64_t rejected_completion) {
  return {first, prompt + chosen_completion, prompt + rejected_completion, prompt, prompt};
}

// `n` random pairs one after another in the stream (prompts 1 to 12 tokens,
// completions 1 to 30).
std::vector<PackPair> random_pairs(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<PackPair> pairs;
  std::uint64_t at = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto prompt = 1 + rng() % 12, c = 1 + rng() % 30, r = 1 + rng() % 30;
    pairs.push_back(pair_of(at, prompt, c, r));
    at += pairs.back().chosen + pairs.back().rejected;
  }
  return pairs;
}

}  // namespace

TEST_CASE("pair cut: a pair that fits is kept whole", "[packing]") {
  const PackPair p = pair_of(100, 3, 4, 2);  // 7 + 5 tokens
  CHECK(cut_pair(p, 12, Overlong::Truncate) == PairCut{7, 5, false, false});
  CHECK(cut_pair(p, 40, Overlong::Truncate) == PairCut{7, 5, false, false});
  // Fitting pairs need no prompt lengths (the loader reads them only for long pairs).
  CHECK(cut_pair({0, 7, 5, 0, 0}, 12, Overlong::Drop) == PairCut{7, 5, false, false});
}

TEST_CASE("pair cut: keep_start keeps both prompts and shares the rest fairly", "[packing]") {
  // Prompts 3 + 3, completions 10 + 10, a row of 13: 7 completion tokens,
  // 4 to chosen (the odd one) and 3 to rejected.
  CHECK(cut_pair(pair_of(0, 3, 10, 10), 13, Overlong::Truncate) == PairCut{7, 6, true, false});
  CHECK(cut_pair(pair_of(0, 3, 10, 10), 14, Overlong::Truncate) == PairCut{7, 7, true, false});
  // A short completion is kept whole and leaves the rest of the room to the other.
  CHECK(cut_pair(pair_of(0, 3, 2, 10), 13, Overlong::Truncate) == PairCut{5, 8, true, false});
  CHECK(cut_pair(pair_of(0, 3, 10, 2), 13, Overlong::Truncate) == PairCut{8, 5, true, false});
  // Prompts of different lengths are each kept.
  CHECK(cut_pair({0, 12, 9, 2, 4}, 10, Overlong::Truncate) == PairCut{4, 6, true, false});
}

TEST_CASE("pair cut: a pair whose prompts leave a side no trained target is dropped", "[packing]") {
  // Prompts 6 + 6 in a row of 13: one completion token for chosen, none for rejected.
  CHECK(cut_pair(pair_of(0, 6, 5, 5), 13, Overlong::Truncate) == PairCut{0, 0, false, true});
  CHECK(cut_pair(pair_of(0, 6, 5, 5), 12, Overlong::Truncate) == PairCut{0, 0, false, true});
  CHECK(cut_pair(pair_of(0, 9, 5, 5), 13, Overlong::Truncate) == PairCut{0, 0, false, true});
  // One completion token each is enough after a non-empty prompt: it is a target.
  CHECK(cut_pair(pair_of(0, 6, 5, 5), 14, Overlong::Truncate) == PairCut{7, 7, true, false});
  // After an empty prompt a completion's first token is its segment's first,
  // never a target: one token a side trains nothing.
  CHECK(cut_pair(pair_of(0, 0, 5, 5), 3, Overlong::Truncate) == PairCut{0, 0, false, true});
  CHECK(cut_pair(pair_of(0, 0, 5, 5), 4, Overlong::Truncate) == PairCut{2, 2, true, false});
}

TEST_CASE("pair cut: Drop leaves out every long pair; Split does not apply", "[packing]") {
  CHECK(cut_pair(pair_of(0, 3, 10, 10), 13, Overlong::Drop) == PairCut{0, 0, false, true});
  CHECK(cut_pair(pair_of(0, 3, 5, 5), 16, Overlong::Drop) == PairCut{8, 8, false, false});
  CHECK_THROWS_AS(cut_pair(pair_of(0, 3, 10, 10), 13, Overlong::Split), std::invalid_argument);
  CHECK_THROWS_AS(cut_pair({0, 4, 20, 5, 1}, 13, Overlong::Truncate), std::invalid_argument);
}

TEST_CASE("pair cut: a truncated pair fills the row, fair to within a token", "[packing]") {
  for (const auto& p : random_pairs(2000, 11)) {
    const std::uint64_t capacity = 16;
    CAPTURE(p.chosen, p.rejected, p.chosen_prompt);
    const PairCut cut = cut_pair(p, capacity, Overlong::Truncate);
    if (p.chosen + p.rejected <= capacity) {
      CHECK(cut == PairCut{p.chosen, p.rejected, false, false});
      continue;
    }
    if (cut.dropped) {
      CHECK(2 * p.chosen_prompt + 2 > capacity);  // the prompts left no room
      continue;
    }
    CHECK(cut.truncated);
    CHECK(cut.chosen + cut.rejected == capacity);
    CHECK(cut.chosen > p.chosen_prompt);
    CHECK(cut.rejected > p.rejected_prompt);
    CHECK(cut.chosen <= p.chosen);
    CHECK(cut.rejected <= p.rejected);
    const auto kc = cut.chosen - p.chosen_prompt, kr = cut.rejected - p.rejected_prompt;
    // Both cut: halves (chosen the odd token). One cut: it keeps at least the other's.
    if (cut.chosen < p.chosen && cut.rejected < p.rejected) CHECK((kc == kr || kc == kr + 1));
    if (cut.chosen < p.chosen && cut.rejected == p.rejected) CHECK(kc >= kr);
    if (cut.rejected < p.rejected && cut.chosen == p.chosen) CHECK(kr + 1 >= kc);
  }
}

TEST_CASE("pair packing: both documents of a pair in one window, chosen then rejected",
          "[packing]") {
  const auto pairs = random_pairs(500, 5);
  const std::uint64_t capacity = 48;
  const PackPlan plan = PackPlan::for_pairs(pairs, capacity, Overlong::Truncate);
  CHECK(plan.paired());
  std::map<std::uint64_t, std::size_t> by_first;  // chosen document's first token -> pair
  for (std::size_t k = 0; k < pairs.size(); ++k) by_first[pairs[k].first] = k;
  std::map<std::size_t, int> seen;
  std::uint64_t used = 0;
  for (std::uint64_t w = 0; w < plan.windows(); ++w) {
    const auto pieces = plan.window(w);
    REQUIRE(!pieces.empty());
    REQUIRE(pieces.size() % 2 == 0);
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < pieces.size(); i += 2) {
      const auto it = by_first.find(pieces[i].first);
      REQUIRE(it != by_first.end());  // piece 2i starts a chosen document
      const PackPair& p = pairs[it->second];
      CHECK(pieces[i + 1].first == p.first + p.chosen);  // piece 2i+1: its rejected document
      const PairCut cut = cut_pair(p, capacity, Overlong::Truncate);
      CHECK(pieces[i].length == cut.chosen);
      CHECK(pieces[i + 1].length == cut.rejected);
      if (i > 0) CHECK(pieces[i].first > pieces[i - 2].first);  // pairs in stream order
      ++seen[it->second];
      sum += pieces[i].length + pieces[i + 1].length;
    }
    CHECK(sum <= capacity);
    used += sum;
  }
  // Every pair not dropped is placed exactly once; the counts add up.
  std::uint64_t truncated = 0, dropped = 0;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const PairCut cut = cut_pair(pairs[k], capacity, Overlong::Truncate);
    truncated += cut.truncated;
    dropped += cut.dropped;
    CHECK(seen[k] == (cut.dropped ? 0 : 1));
  }
  const PackStats& s = plan.stats();
  CHECK(s.pairs == 500);
  CHECK(s.documents == 1000);
  CHECK(s.truncated_pairs == truncated);
  CHECK(s.dropped_pairs == dropped);
  CHECK(truncated > 0);
  CHECK(dropped == 0);  // prompts of at most 12 + 12 leave room in 48
  CHECK(s.tokens_used == used);
  CHECK(s.windows == plan.windows());
  CHECK(s.efficiency() > 0.9);
  CHECK(s.truncated == 0);  // the document counts are for document mode
}

TEST_CASE("pair packing: deterministic, drops counted, Drop and Split", "[packing]") {
  const auto pairs = random_pairs(300, 9);
  const PackPlan a = PackPlan::for_pairs(pairs, 20, Overlong::Truncate);
  const PackPlan b = PackPlan::for_pairs(pairs, 20, Overlong::Truncate);
  REQUIRE(a.windows() == b.windows());
  for (std::uint64_t w = 0; w < a.windows(); ++w)
    CHECK(std::vector<PackPiece>(a.window(w).begin(), a.window(w).end()) ==
          std::vector<PackPiece>(b.window(w).begin(), b.window(w).end()));
  // Prompts of up to 12 tokens a side in rows of 20: some pairs cannot keep a completion.
  std::uint64_t dropped = 0, fitting = 0;
  for (const auto& p : pairs) {
    dropped += 2 * p.chosen_prompt + 2 > 20 && p.chosen + p.rejected > 20;
    fitting += p.chosen + p.rejected <= 20;
  }
  CHECK(dropped > 0);
  CHECK(a.stats().dropped_pairs == dropped);
  CHECK(a.stats().truncated_pairs == pairs.size() - dropped - fitting);
  // Drop: every pair longer than a row is left out, none cut.
  const PackPlan d = PackPlan::for_pairs(pairs, 20, Overlong::Drop);
  CHECK(d.stats().dropped_pairs == pairs.size() - fitting);
  CHECK(d.stats().truncated_pairs == 0);
  CHECK_THROWS_AS(PackPlan::for_pairs(pairs, 20, Overlong::Split), std::invalid_argument);
  // Pairs out of stream order are a caller's bug.
  std::vector<PackPair> backwards = {pairs[1], pairs[0]};
  CHECK_THROWS_AS(PackPlan::for_pairs(backwards, 20, Overlong::Truncate), std::invalid_argument);
}
