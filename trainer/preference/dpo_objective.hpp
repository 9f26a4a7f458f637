#pragma once
#include <cstdint>
#include <string>
#include <vector>

// DPO's objective on one pair's summed completion log-probs, and TRL's
// metrics over many pairs, in plain double arithmetic (no LibTorch): the
// formulas of TRL's DPOTrainer (0.29 and later). docs/dpo.md.
namespace wireup::train::preference {

enum class DpoLoss { Sigmoid, Robust, Hinge, Ipo };

// "sigmoid", "robust", "hinge", "ipo"; InputError naming `what` otherwise.
DpoLoss parse_dpo_loss(const std::string& text, const std::string& what);
const char* dpo_loss_name(DpoLoss loss);

struct DpoSettings {
  double beta = 0.1;  // --dpo_beta (IPO's tau for ipo)
  DpoLoss loss = DpoLoss::Sigmoid;
  double label_smoothing = 0.0;  // --dpo_label_smoothing: robust only, in [0, 0.5)
  double sft_weight = 0.0;       // --dpo_sft_weight: the chosen completion's NLL term
};

// What is wrong with the settings, naming the flag; "" when they are usable.
std::string dpo_settings_problem(const DpoSettings& s);

// One pair: summed log-probs of each completion under the policy and the
// reference, and each completion's token count (ipo divides by it).
struct PairLogps {
  double policy_chosen = 0, policy_rejected = 0;
  double ref_chosen = 0, ref_rejected = 0;
  std::uint64_t chosen_tokens = 1, rejected_tokens = 1;
};

// log(sigmoid(x)), exact for large |x| of either sign.
double log_sigmoid(double x);

// The pair's loss (without the sft term), as TRL's _compute_loss:
//   h = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
//   sigmoid  -log_sigmoid(beta h)
//   robust   (-(1-e) log_sigmoid(beta h) + e log_sigmoid(-beta h)) / (1 - 2e)
//   hinge    max(0, 1 - beta h)
//   ipo      (hc/len_c - hr/len_r - 1/(2 beta))^2, hc and hr each side's log-ratio
// At h = 0 (policy == reference): ln 2 for sigmoid and robust, 1 for hinge.
double dpo_pair_loss(const DpoSettings& s, const PairLogps& p);

// The pair loss's derivatives with respect to the policy's summed log-probs
// of each completion (the reference's are constants). Where the loss has a
// kink (hinge at beta h = 1) the derivative is autograd's: 0.
struct PairGradient {
  double chosen = 0, rejected = 0;
};
PairGradient dpo_pair_gradient(const DpoSettings& s, const PairLogps& p);

// One micro-batch's part of an optimizer step's DPO objective. The step's
// loss is the mean pair loss over every pair of the step (all micro-batches,
// all ranks: `step_pairs`) plus sft_weight times the chosen completions' NLL
// over their tokens (`step_chosen_tokens`, the step's). So each pair adds
// loss/step_pairs, each chosen completion -sft_weight*logp/step_chosen_tokens,
// and the micro-batches' parts sum to the step's loss whatever the split.
// `gradient` holds d(part)/d(policy log-prob) of each side: [2q] the chosen
// and [2q+1] the rejected completion of pairs[q].
struct MicroBatchObjective {
  double loss = 0;
  std::vector<double> gradient;
};
MicroBatchObjective dpo_micro_batch(const DpoSettings& s, const std::vector<PairLogps>& pairs,
                                    double step_pairs, double step_chosen_tokens);

// TRL's metrics: means over pairs of the implicit rewards beta (policy -
// reference) of each side, their margin, the fraction of pairs whose chosen
// reward is strictly above the rejected one (ties count 0), and the policy's
// summed log-probs; `loss` is the mean pair loss plus sft_weight times the
// chosen completions' NLL per token (their summed -log-probs over their tokens).
struct DpoMetrics {
  std::uint64_t pairs = 0;
  double loss = 0, chosen_reward = 0, rejected_reward = 0, reward_accuracy = 0, reward_margin = 0,
         chosen_logps = 0, rejected_logps = 0;
};

// Sums over pairs, merged across micro-batches and ranks by adding their
// values() element-wise (an all-reduce of kSumValues doubles), so any split of
// the same pairs gives the same metrics.
class DpoSums {
 public:
  static constexpr std::size_t kSumValues = 9;

  void add(const DpoSettings& s, const PairLogps& p);
  std::vector<double> values() const;
  static DpoSums from_values(const std::vector<double>& v);  // std::invalid_argument on size
  DpoMetrics mean(const DpoSettings& s) const;

 private:
  double pairs_ = 0, loss_ = 0, chosen_reward_ = 0, rejected_reward_ = 0, wins_ = 0,
         chosen_logps_ = 0, rejected_logps_ = 0, chosen_nll_ = 0, chosen_tokens_ = 0;
};

}  // namespace wireup::train::preference
