#include "preference/dpo_objective.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "wireup/error.hpp"

namespace wireup::train::preference {

DpoLoss parse_dpo_loss(const std::string& text, const std::string& what) {
  if (text == "sigmoid") return DpoLoss::Sigmoid;
  if (text == "robust") return DpoLoss::Robust;
  if (text == "hinge") return DpoLoss::Hinge;
  if (text == "ipo") return DpoLoss::Ipo;
  throw InputError(what + " '" + text + "': expected sigmoid, robust, hinge or ipo");
}

const char* dpo_loss_name(DpoLoss loss) {
  switch (loss) {
    case DpoLoss::Sigmoid:
      return "sigmoid";
    case DpoLoss::Robust:
      return "robust";
    case DpoLoss::Hinge:
      return "hinge";
    case DpoLoss::Ipo:
      return "ipo";
  }
  return "?";
}

std::string dpo_settings_problem(const DpoSettings& s) {
  if (!(s.beta > 0.0) || !std::isfinite(s.beta))
    return "--dpo_beta " + std::to_string(s.beta) + ": expected a number above 0";
  if (!(s.label_smoothing >= 0.0 && s.label_smoothing < 0.5))
    return "--dpo_label_smoothing " + std::to_string(s.label_smoothing) +
           ": expected a number in [0, 0.5)";
  if (s.label_smoothing > 0.0 && s.loss != DpoLoss::Robust)
    return std::string("--dpo_label_smoothing applies to --dpo_loss robust, not ") +
           dpo_loss_name(s.loss);
  if (!(s.sft_weight >= 0.0) || !std::isfinite(s.sft_weight))
    return "--dpo_sft_weight " + std::to_string(s.sft_weight) + ": expected a number >= 0";
  return "";
}

double log_sigmoid(double x) {
  return x >= 0 ? -std::log1p(std::exp(-x)) : x - std::log1p(std::exp(x));
}

double dpo_pair_loss(const DpoSettings& s, const PairLogps& p) {
  const double chosen = p.policy_chosen - p.ref_chosen;
  const double rejected = p.policy_rejected - p.ref_rejected;
  const double z = s.beta * (chosen - rejected);
  switch (s.loss) {
    case DpoLoss::Sigmoid:
      return -log_sigmoid(z);
    case DpoLoss::Robust: {
      const double e = s.label_smoothing;
      return (-(1.0 - e) * log_sigmoid(z) + e * log_sigmoid(-z)) / (1.0 - 2.0 * e);
    }
    case DpoLoss::Hinge:
      return std::max(0.0, 1.0 - z);
    case DpoLoss::Ipo: {
      const double c = chosen / static_cast<double>(std::max<std::uint64_t>(p.chosen_tokens, 1));
      const double r =
          rejected / static_cast<double>(std::max<std::uint64_t>(p.rejected_tokens, 1));
      const double d = c - r - 1.0 / (2.0 * s.beta);
      return d * d;
    }
  }
  return 0.0;
}

namespace {
double sigmoid(double x) { return std::exp(log_sigmoid(x)); }
}  // namespace

PairGradient dpo_pair_gradient(const DpoSettings& s, const PairLogps& p) {
  const double chosen = p.policy_chosen - p.ref_chosen;
  const double rejected = p.policy_rejected - p.ref_rejected;
  const double z = s.beta * (chosen - rejected);
  double dz = 0;  // d loss / d z, z = beta h
  switch (s.loss) {
    case DpoLoss::Sigmoid:
      dz = -sigmoid(-z);
      break;
    case DpoLoss::Robust: {
      const double e = s.label_smoothing;
      dz = (-(1.0 - e) * sigmoid(-z) - e * sigmoid(z)) / (1.0 - 2.0 * e);
      break;
    }
    case DpoLoss::Hinge:
      dz = z < 1.0 ? -1.0 : 0.0;
      break;
    case DpoLoss::Ipo: {
      const double lc = static_cast<double>(std::max<std::uint64_t>(p.chosen_tokens, 1));
      const double lr = static_cast<double>(std::max<std::uint64_t>(p.rejected_tokens, 1));
      const double d = chosen / lc - rejected / lr - 1.0 / (2.0 * s.beta);
      return {2.0 * d / lc, -2.0 * d / lr};
    }
  }
  return {dz * s.beta, -dz * s.beta};
}

MicroBatchObjective dpo_micro_batch(const DpoSettings& s, const std::vector<PairLogps>& pairs,
                                    double step_pairs, double step_chosen_tokens) {
  if (!(step_pairs > 0) || (s.sft_weight > 0 && !(step_chosen_tokens > 0)))
    throw std::invalid_argument("dpo_micro_batch: the step's pairs (" + std::to_string(step_pairs) +
                                ") and chosen tokens (" + std::to_string(step_chosen_tokens) +
                                ") must be above 0");
  MicroBatchObjective out;
  out.gradient.resize(2 * pairs.size());
  const double sft = s.sft_weight > 0 ? s.sft_weight / step_chosen_tokens : 0.0;
  for (std::size_t q = 0; q < pairs.size(); ++q) {
    const PairLogps& p = pairs[q];
    out.loss += dpo_pair_loss(s, p) / step_pairs - sft * p.policy_chosen;
    const PairGradient g = dpo_pair_gradient(s, p);
    out.gradient[2 * q] = g.chosen / step_pairs - sft;
    out.gradient[2 * q + 1] = g.rejected / step_pairs;
  }
  return out;
}

void DpoSums::add(const DpoSettings& s, const PairLogps& p) {
  const double chosen = s.beta * (p.policy_chosen - p.ref_chosen);
  const double rejected = s.beta * (p.policy_rejected - p.ref_rejected);
  pairs_ += 1;
  loss_ += dpo_pair_loss(s, p);
  chosen_reward_ += chosen;
  rejected_reward_ += rejected;
  wins_ += chosen > rejected ? 1 : 0;
  chosen_logps_ += p.policy_chosen;
  rejected_logps_ += p.policy_rejected;
  chosen_nll_ -= p.policy_chosen;
  chosen_tokens_ += static_cast<double>(p.chosen_tokens);
}

std::vector<double> DpoSums::values() const {
  return {pairs_,        loss_,           chosen_reward_, rejected_reward_, wins_,
          chosen_logps_, rejected_logps_, chosen_nll_,    chosen_tokens_};
}

DpoSums DpoSums::from_values(const std::vector<double>& v) {
  if (v.size() != kSumValues)
    throw std::invalid_argument("DpoSums::from_values: " + std::to_string(v.size()) +
                                " values, expected " + std::to_string(kSumValues));
  DpoSums s;
  s.pairs_ = v[0];
  s.loss_ = v[1];
  s.chosen_reward_ = v[2];
  s.rejected_reward_ = v[3];
  s.wins_ = v[4];
  s.chosen_logps_ = v[5];
  s.rejected_logps_ = v[6];
  s.chosen_nll_ = v[7];
  s.chosen_tokens_ = v[8];
  return s;
}

DpoMetrics DpoSums::mean(const DpoSettings& s) const {
  DpoMetrics m;
  m.pairs = static_cast<std::uint64_t>(pairs_);
  if (pairs_ <= 0) return m;
  m.loss = loss_ / pairs_;
  if (s.sft_weight > 0 && chosen_tokens_ > 0) m.loss += s.sft_weight * chosen_nll_ / chosen_tokens_;
  m.chosen_reward = chosen_reward_ / pairs_;
  m.rejected_reward = rejected_reward_ / pairs_;
  m.reward_accuracy = wins_ / pairs_;
  m.reward_margin = m.chosen_reward - m.rejected_reward;
  m.chosen_logps = chosen_logps_ / pairs_;
  m.rejected_logps = rejected_logps_ / pairs_;
  return m;
}

}  // namespace wireup::train::preference
