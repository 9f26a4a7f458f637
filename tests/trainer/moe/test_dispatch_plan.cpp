// The dispatch plans (trainer/moe/dispatch_plan.hpp): token rows grouped by
// expert, stable, by expert-parallel rank; the receiving side's permutation
// into expert-major rows; and a full exchange simulated over R ranks, where
// every assignment reaches its expert's rank exactly once and comes back to
// its place.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "moe/dispatch_plan.hpp"

using namespace wireup::train::moe;

TEST_CASE("assignments are grouped by expert, stably", "[moe]") {
  // 4 tokens, k = 2, 4 experts.
  const std::vector<std::int64_t> expert_of{2, 0, 1, 2, 0, 3, 2, 1};
  const DispatchPlan p = plan_dispatch(expert_of, 4);
  CHECK(p.order == std::vector<std::int64_t>{1, 4, 2, 7, 0, 3, 6, 5});
  CHECK(p.expert_offsets == std::vector<std::int64_t>{0, 2, 4, 7, 8});
  CHECK(p.expert_rows(2) == 3);
  CHECK(p.rank_offsets == std::vector<std::int64_t>{0, 8});
  CHECK(remote_rows(p, 0) == 0);

  const DispatchPlan two = plan_dispatch(expert_of, 4, 2);  // experts {0,1} | {2,3}
  CHECK(two.order == p.order);
  CHECK(two.rank_offsets == std::vector<std::int64_t>{0, 4, 8});
  CHECK(two.experts_per_rank() == 2);
  CHECK(remote_rows(two, 0) == 4);
  CHECK(remote_rows(two, 1) == 4);
}

TEST_CASE("an expert nobody chose has no rows", "[moe]") {
  const std::vector<std::int64_t> expert_of{3, 3, 3};
  const DispatchPlan p = plan_dispatch(expert_of, 4, 4);
  CHECK(p.expert_offsets == std::vector<std::int64_t>{0, 0, 0, 0, 3});
  CHECK(p.rank_offsets == std::vector<std::int64_t>{0, 0, 0, 0, 3});
  CHECK(plan_dispatch(std::vector<std::int64_t>{}, 4).order.empty());
}

TEST_CASE("a bad assignment or split is refused, naming it", "[moe]") {
  const std::vector<std::int64_t> bad{0, 4};
  CHECK_THROWS_WITH(plan_dispatch(bad, 4), "plan_dispatch: assignment 1 chose expert 4 of 4");
  const std::vector<std::int64_t> negative{-1};
  CHECK_THROWS_AS(plan_dispatch(negative, 4), std::invalid_argument);
  CHECK_THROWS_WITH(plan_dispatch(std::vector<std::int64_t>{0}, 6, 4),
                    "plan_dispatch: 6 experts over 4 ranks: expected a positive multiple");
  CHECK_THROWS_AS(plan_receive(std::vector<std::int64_t>{1, 2, 3}, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(plan_receive(std::vector<std::int64_t>{1, -2}, 2, 1), std::invalid_argument);
}

TEST_CASE("received rows are put in expert-major order", "[moe]") {
  // 2 sources x 2 local experts: rank 0 sends 1 row for e0 and 2 for e1, rank 1
  // sends 3 for e0 and 0 for e1. Arrival: [s0e0 | s0e1 s0e1 | s1e0 s1e0 s1e0].
  const std::vector<std::int64_t> counts{1, 2, 3, 0};
  const ReceivePlan r = plan_receive(counts, 2, 2);
  CHECK(r.order == std::vector<std::int64_t>{0, 3, 4, 5, 1, 2});
  CHECK(r.expert_offsets == std::vector<std::int64_t>{0, 4, 6});
  CHECK(r.source_rows == std::vector<std::int64_t>{3, 3});
}

TEST_CASE("a simulated exchange delivers each assignment to its expert once and back", "[moe]") {
  const std::int64_t ranks = 4, experts = 8, tokens = 37, k = 3, local = experts / ranks;
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::int64_t> pick(0, experts - 1);
  // Each rank's assignments: a value that names (rank, assignment) and its expert.
  std::vector<std::vector<std::int64_t>> expert_of(ranks);
  std::vector<DispatchPlan> send(ranks);
  for (std::int64_t r = 0; r < ranks; ++r) {
    for (std::int64_t a = 0; a < tokens * k; ++a) expert_of[r].push_back(pick(rng));
    send[r] = plan_dispatch(expert_of[r], experts, ranks);
  }
  for (std::int64_t dst = 0; dst < ranks; ++dst) {
    // What dst receives, source-major: each source's rows for dst's experts.
    std::vector<std::int64_t> counts, arrived_tag, arrived_expert;
    for (std::int64_t src = 0; src < ranks; ++src) {
      for (std::int64_t e = 0; e < local; ++e)
        counts.push_back(send[src].expert_rows(dst * local + e));
      for (std::int64_t i = send[src].rank_offsets[dst]; i < send[src].rank_offsets[dst + 1]; ++i) {
        const std::int64_t a = send[src].order[i];
        arrived_tag.push_back(src * 100000 + a);
        arrived_expert.push_back(expert_of[src][a]);
      }
    }
    const ReceivePlan recv = plan_receive(counts, ranks, local);
    REQUIRE(recv.order.size() == arrived_tag.size());
    // Expert-major: each local expert's rows are contiguous and are its own.
    for (std::int64_t e = 0; e < local; ++e)
      for (std::int64_t i = recv.expert_offsets[e]; i < recv.expert_offsets[e + 1]; ++i)
        CHECK(arrived_expert[recv.order[i]] == dst * local + e);
    // A permutation: scattering back restores the arrival order.
    std::vector<std::int64_t> back(recv.order.size(), -1);
    for (std::size_t i = 0; i < recv.order.size(); ++i)
      back[recv.order[i]] = arrived_tag[recv.order[i]];
    CHECK(back == arrived_tag);
  }
  // Every rank's assignments all went somewhere, exactly once.
  for (std::int64_t r = 0; r < ranks; ++r) {
    std::vector<std::int64_t> sorted = send[r].order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int64_t> all(tokens * k);
    std::iota(all.begin(), all.end(), 0);
    CHECK(sorted == all);
  }
}
