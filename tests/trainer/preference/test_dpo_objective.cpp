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

TEST_CASE("DPO's derivatives match central differences of the loss", "[dpo]") {
  // A central difference of step d has error ~ d^2 |f'''| / 6 plus the loss's
  // rounding, ~1e-16 / d: with d = 1e-4 and |f'''| <= beta^3 / 4 (sigmoid)
  // or 0 (ipo, a quadratic), both are far below 1e-7.
  constexpr double d = 1e-4, tol = 1e-7;
  const auto p = pair(-20.0, -31.0, -21.5, -29.0, 6, 11);
  const DpoSettings cases[] = {{0.1, DpoLoss::Sigmoid},
                               {0.7, DpoLoss::Sigmoid},
                               {0.3, DpoLoss::Robust, 0.15},
                               {0.05, DpoLoss::Hinge},
                               {0.4, DpoLoss::Ipo}};
  for (const auto& s : cases) {
    INFO("loss " << dpo_loss_name(s.loss) << " beta " << s.beta);
    const PairGradient g = dpo_pair_gradient(s, p);
    auto at = [&](double dc, double dr) {
      return dpo_pair_loss(s, pair(p.policy_chosen + dc, p.policy_rejected + dr, p.ref_chosen,
                                   p.ref_rejected, 6, 11));
    };
    CHECK(g.chosen == Approx((at(d, 0) - at(-d, 0)) / (2 * d)).margin(tol));
    CHECK(g.rejected == Approx((at(0, d) - at(0, -d)) / (2 * d)).margin(tol));
  }
  // At h = 0 the sigmoid's derivative is -beta/2 on the chosen side.
  const auto same = pair(-5.0, -7.0, -5.0, -7.0);
  CHECK(dpo_pair_gradient({0.1}, same).chosen == Approx(-0.05).epsilon(kTol));
  CHECK(dpo_pair_gradient({0.1}, same).rejected == Approx(0.05).epsilon(kTol));
  // Past the hinge: nothing to learn.
  const auto far = pair(0.0, -100.0, 0.0, 0.0);
  CHECK(dpo_pair_gradient({0.1, DpoLoss::Hinge}, far).chosen == 0.0);
}

TEST_CASE("A step's micro-batch parts sum to the step's loss, however it is split", "[dpo]") {
  DpoSettings s{0.2, DpoLoss::Sigmoid, 0.0, 0.5};
  const std::vector<PairLogps> all = {pair(-3, -5, -3.5, -4.5, 3, 4), pair(-9, -2, -8, -2.5, 7, 2),
                                      pair(-1, -1, -1, -1, 1, 1)};
  double tokens = 0;
  DpoSums sums;
  for (const auto& p : all) {
    tokens += static_cast<double>(p.chosen_tokens);
    sums.add(s, p);
  }
  const double whole = dpo_micro_batch(s, all, 3, tokens).loss;
  const auto first = dpo_micro_batch(s, {all[0]}, 3, tokens);
  const auto rest = dpo_micro_batch(s, {all[1], all[2]}, 3, tokens);
  // A few additions of terms below 10: ~1e-15 apart.
  CHECK(first.loss + rest.loss == Approx(whole).margin(1e-13));
  CHECK(whole == Approx(sums.mean(s).loss).margin(1e-13));
  REQUIRE(rest.gradient.size() == 4);
  // The chosen side: the pair's derivative over 3 pairs, less the sft term's 0.5/11.
  CHECK(rest.gradient[0] ==
        Approx(dpo_pair_gradient(s, all[1]).chosen / 3 - 0.5 / 11).epsilon(kTol));
  CHECK(rest.gradient[1] == Approx(dpo_pair_gradient(s, all[1]).rejected / 3).epsilon(kTol));
  CHECK_THROWS_WITH(dpo_micro_batch(s, all, 0, tokens), Contains("must be above 0"));
}
