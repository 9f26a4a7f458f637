// DPO's objective and TRL's metrics on pairs' summed log-probs (no Torch):
// each loss type at h = 0 (policy == reference: ln 2, ln 2, 1, 1/(4 beta^2))
// and at a chosen h, against values worked out from the formulas; the strict
// accuracy; the sft term; sums that give the same metrics however the pairs
// are split; the settings' errors naming the flag.
#include <catch2/catch.hpp>
#include <cmath>

#include "preference/dpo_objective.hpp"
#include "wireup/error.hpp"

using namespace wireup::train::preference;
using Catch::Matchers::Contains;

namespace {

// Double arithmetic on values near 1: a few ulps of error in log1p and exp.
constexpr double kTol = 1e-14;

PairLogps pair(double pc, double pr, double rc, double rr, std::uint64_t lc = 1,
               std::uint64_t lr = 1) {
  return {pc, pr, rc, rr, lc, lr};
}

}  // namespace

TEST_CASE("DPO losses at policy == reference", "[dpo]") {
  const auto same = pair(-12.5, -30.0, -12.5, -30.0, 5, 9);
  DpoSettings s;
  CHECK(dpo_pair_loss(s, same) == Approx(std::log(2.0)).epsilon(kTol));
  s.loss = DpoLoss::Robust;
  s.label_smoothing = 0.1;
  CHECK(dpo_pair_loss(s, same) == Approx(std::log(2.0)).epsilon(kTol));
  s = {0.1, DpoLoss::Hinge};
  CHECK(dpo_pair_loss(s, same) == 1.0);
  s = {0.1, DpoLoss::Ipo};
  CHECK(dpo_pair_loss(s, same) == Approx(25.0).epsilon(kTol));  // (0 - 1/(2*0.1))^2
}

TEST_CASE("DPO losses at a margin, worked out by hand", "[dpo]") {
  // chosen log-ratio -2 - (-3) = 1, rejected -8 - (-6) = -2: h = 3.
  const auto p = pair(-2.0, -8.0, -3.0, -6.0, 4, 8);
  DpoSettings s{0.5, DpoLoss::Sigmoid};
  // -log sigmoid(1.5) = log(1 + e^-1.5)
  CHECK(dpo_pair_loss(s, p) == Approx(std::log1p(std::exp(-1.5))).epsilon(kTol));
  s.loss = DpoLoss::Robust;
  s.label_smoothing = 0.2;
  const double want = (0.8 * std::log1p(std::exp(-1.5)) - 0.2 * std::log1p(std::exp(1.5))) / 0.6;
  CHECK(dpo_pair_loss(s, p) == Approx(want).epsilon(kTol));
  s = {0.5, DpoLoss::Hinge};
  CHECK(dpo_pair_loss(s, p) == 0.0);  // 1 - 1.5 < 0
  s = {0.1, DpoLoss::Hinge};
  CHECK(dpo_pair_loss(s, p) == Approx(0.7).epsilon(kTol));
  s = {0.5, DpoLoss::Ipo};
  // 1/4 - (-2/8) - 1 = -0.5
  CHECK(dpo_pair_loss(s, p) == Approx(0.25).epsilon(kTol));
  // log_sigmoid stays finite far out on both sides.
  CHECK(log_sigmoid(-800.0) == -800.0);
  CHECK(log_sigmoid(800.0) == 0.0);
}

TEST_CASE("TRL's metrics: rewards, strict accuracy, margins, log-probs", "[dpo]") {
  const DpoSettings s{0.1, DpoLoss::Sigmoid};
  DpoSums sums;
  sums.add(s, pair(-2.0, -8.0, -3.0, -6.0));  // rewards 0.1, -0.2: a win
  sums.add(s, pair(-4.0, -4.0, -4.0, -4.0));  // a tie: not a win
  const auto m = sums.mean(s);
  CHECK(m.pairs == 2);
  CHECK(m.chosen_reward == Approx(0.05).epsilon(kTol));
  CHECK(m.rejected_reward == Approx(-0.1).epsilon(kTol));
  CHECK(m.reward_margin == Approx(0.15).epsilon(kTol));
  CHECK(m.reward_accuracy == 0.5);
  CHECK(m.chosen_logps == -3.0);
  CHECK(m.rejected_logps == -6.0);
  CHECK(m.loss == Approx((std::log1p(std::exp(-0.3)) + std::log(2.0)) / 2).epsilon(kTol));
  // The sft term: the chosen completions' NLL per token, weighted.
  const DpoSettings with_sft{0.1, DpoLoss::Sigmoid, 0.0, 2.0};
  DpoSums sft;
  sft.add(with_sft, pair(-2.0, -8.0, -3.0, -6.0, 4, 1));
  sft.add(with_sft, pair(-4.0, -4.0, -4.0, -4.0, 2, 1));
  CHECK(sft.mean(with_sft).loss == Approx(m.loss + 2.0 * 6.0 / 6.0).epsilon(kTol));
}

TEST_CASE("sums merge: any split of the pairs gives the same metrics", "[dpo]") {
  const DpoSettings s{0.01, DpoLoss::Sigmoid};
  std::vector<PairLogps> pairs;
  for (int i = 0; i < 8; ++i) pairs.push_back(pair(-1.0 - i, -2.0 * i, -1.5, -i - 0.5, i + 1, 3));
  DpoSums whole;
  for (const auto& p : pairs) whole.add(s, p);
  // Two ranks of two micro-batches each, merged by adding values().
  std::vector<double> merged(DpoSums::kSumValues, 0.0);
  for (int part = 0; part < 4; ++part) {
    DpoSums piece;
    for (int i = 2 * part; i < 2 * part + 2; ++i) piece.add(s, pairs[i]);
    const auto v = piece.values();
    for (std::size_t k = 0; k < v.size(); ++k) merged[k] += v[k];
  }
  const auto a = whole.mean(s), b = DpoSums::from_values(merged).mean(s);
  CHECK(a.pairs == b.pairs);
  // The same terms summed in another order: within a few ulps of the sum.
  CHECK(b.loss == Approx(a.loss).epsilon(1e-15 * 8));
  CHECK(b.reward_margin == Approx(a.reward_margin).epsilon(1e-15 * 8));
  CHECK(b.reward_accuracy == a.reward_accuracy);
  CHECK_THROWS_AS(DpoSums::from_values({1.0}), std::invalid_argument);
}

TEST_CASE("DPO settings: names and errors naming the flag", "[dpo]") {
  CHECK(parse_dpo_loss("ipo", "--dpo_loss") == DpoLoss::Ipo);
  CHECK(std::string(dpo_loss_name(DpoLoss::Robust)) == "robust");
  CHECK_THROWS_WITH(parse_dpo_loss("kto", "--dpo_loss"),
                    Contains("--dpo_loss 'kto': expected sigmoid, robust, hinge or ipo"));
  CHECK(dpo_settings_problem({}).empty());
  CHECK_THAT(dpo_settings_problem({0.0}), Contains("--dpo_beta"));
  CHECK_THAT(dpo_settings_problem({0.1, DpoLoss::Robust, 0.5}), Contains("[0, 0.5)"));
  CHECK_THAT(dpo_settings_problem({0.1, DpoLoss::Sigmoid, 0.1}),
             Contains("applies to --dpo_loss robust, not sigmoid"));
  CHECK(dpo_settings_problem({0.1, DpoLoss::Robust, 0.1}).empty());
  CHECK_THAT(dpo_settings_problem({0.1, DpoLoss::Sigmoid, 0.0, -1.0}),
             Contains("--dpo_sft_weight"));
}
