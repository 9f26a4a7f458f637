#include "main/dpo_step.hpp"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>

#include "hf/hf_import.hpp"
#include "main/model_weights.hpp"
#include "main/run_setup.hpp"

namespace wireup::train {

namespace pref = preference;

DpoReference::DpoReference(ShardedModel& policy) : policy_(&policy) {
  if (!policy.lora())
    throw std::logic_error(
        "DpoReference: a policy without LoRA adapters has no base to fall back on");
}

DpoReference::DpoReference(std::unique_ptr<ShardedModel> model) : copy_(std::move(model)) {}

std::unique_ptr<DpoReference> training_reference(const TrainOptions& o, const WorldLayout& w,
                                                 const CommGroups& groups, ShardedModel& policy) {
  if (policy.lora()) return std::make_unique<DpoReference>(policy);
  ModelOptions mo = inference_model_options(w, o.compute);
  // No start weights: the seed's values, the policy's initial ones.
  mo.random_init = o.init_from_hf.empty() && o.init_from_checkpoint.empty();
  auto copy = std::make_unique<ShardedModel>(o.model, groups, mo, o.seed);
  load_start_weights(*copy, o, groups, w);
  return std::make_unique<DpoReference>(std::move(copy));
}

DpoReference::~DpoReference() = default;

DpoMeta dpo_meta(const TrainOptions& o, const DpoReference& reference) {
  DpoMeta d{o.dpo, reference.kind(), "", ""};
  if (reference.adapters_off()) return d;  // the base: "lora" names it
  namespace fs = std::filesystem;
  fs::path dir;
  if (!o.init_from_hf.empty()) {
    dir = fs::absolute(o.init_from_hf).lexically_normal();
    d.reference_source = "hf:" + dir.string();
  } else if (!o.init_from_checkpoint.empty()) {
    dir =
        fs::absolute(checkpoint_weights(o.init_from_checkpoint, "--init_from_checkpoint").step_dir)
            .lexically_normal();
    d.reference_source = "checkpoint:" + dir.string();
  } else {
    d.reference_source = "seed:" + std::to_string(o.seed);
  }
  if (!dir.empty()) d.reference_fingerprint = base_fingerprint(dir);
  return d;
}

std::int64_t DpoReference::state_bytes() const { return copy_ ? copy_->state_bytes() : 0; }

namespace {

std::vector<double> to_host(const at::Tensor& side_logps) {
  const at::Tensor t = side_logps.detach().to(at::kCPU, at::kDouble).contiguous();
  const double* p = t.data_ptr<double>();
  return {p, p + t.numel()};
}

// The trained tokens of each side: its completion's length (ipo divides by it).
std::vector<std::uint64_t> side_tokens(const ModelBatch& b) {
  std::vector<std::uint64_t> n(static_cast<std::size_t>(2 * b.pair_count), 0);
  const at::Tensor sides = b.sides.contiguous();
  const std::int64_t* s = sides.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < sides.numel(); ++i) ++n.at(static_cast<std::size_t>(s[i]));
  return n;
}

std::vector<pref::PairLogps> pair_logps(const std::vector<double>& policy,
                                        const std::vector<double>& reference,
                                        const std::vector<std::uint64_t>& tokens) {
  std::vector<pref::PairLogps> pairs(policy.size() / 2);
  for (std::size_t q = 0; q < pairs.size(); ++q)
    pairs[q] = {policy[2 * q],        policy[2 * q + 1], reference[2 * q],
                reference[2 * q + 1], tokens[2 * q],     tokens[2 * q + 1]};
  return pairs;
}

// One forward of `model` on `b` whose objective only keeps the sides' log-probs.
std::vector<double> forward_side_logps(ShardedModel& model, const ModelBatch& b,
                                       bool adapters_off) {
  std::vector<double> out;
  ModelBatch pass = b;
  pass.adapters_off = adapters_off;
  pass.side_objective = [&out](const at::Tensor& side) {
    out = to_host(side);
    return side.sum();
  };
  model.step(pass, false, 0.0, 1.0);
  return out;
}

}  // namespace

std::vector<double> DpoReference::side_logps(const ModelBatch& batch) {
  if (!batch.paired())
    throw std::logic_error("DpoReference::side_logps: a micro-batch without pairs");
  const at::NoGradGuard no_grad;
  return copy_ ? forward_side_logps(*copy_, batch, false)
               : forward_side_logps(*policy_, batch, true);
}

DpoPass dpo_pass(ShardedModel& policy, DpoReference& reference,
                 const std::vector<ModelBatch>& micro, const pref::DpoSettings& s, Comm& world,
                 bool backward) {
  // The step's pairs and chosen tokens over every micro-batch and rank: each
  // micro-batch's part of the loss is over them (dpo_objective.hpp).
  std::vector<std::vector<std::uint64_t>> tokens;
  double local[2] = {0, 0};
  for (const ModelBatch& b : micro) {
    tokens.push_back(side_tokens(b));
    local[0] += static_cast<double>(b.pair_count);
    for (std::size_t q = 0; q < tokens.back().size(); q += 2)
      local[1] += static_cast<double>(tokens.back()[q]);
  }
  at::Tensor totals =
      at::tensor(std::vector<double>{local[0], local[1]}, at::kDouble).to(policy.device());
  world.all_reduce_sum(totals);
  const at::Tensor host_totals = totals.to(at::kCPU);
  const double step_pairs = host_totals[0].item<double>();
  const double step_chosen = host_totals[1].item<double>();
  if (step_pairs <= 0) {
    if (backward) throw std::runtime_error("dpo_pass: the step's batches hold no pair");
    return {};  // an empty validation split
  }

  pref::DpoSums sums;
  for (std::size_t m = 0; m < micro.size(); ++m) {
    const ModelBatch& b = micro[m];
    const std::vector<double> ref = reference.side_logps(b);
    std::vector<pref::PairLogps> pairs;
    ModelBatch pass = b;
    // Called once per forward (again if a recomputation runs the head again):
    // the value is the objective's part, the gradient d(part)/d(side log-prob).
    pass.side_objective = [&](const at::Tensor& side) {
      pairs = pair_logps(to_host(side), ref, tokens[m]);
      const pref::MicroBatchObjective part =
          pref::dpo_micro_batch(s, pairs, step_pairs, step_chosen);
      const at::Tensor g = at::tensor(part.gradient, at::kDouble).to(side.device());
      const at::Tensor weighted = (side * g).sum();
      return weighted - weighted.detach() + part.loss;
    };
    policy.step(pass, backward, 1.0, 1.0);
    for (const auto& p : pairs) sums.add(s, p);
  }
  std::vector<double> values = sums.values();
  at::Tensor all = at::tensor(values, at::kDouble).to(policy.device());
  world.all_reduce_sum(all);
  const at::Tensor host = all.to(at::kCPU).contiguous();
  values.assign(host.data_ptr<double>(), host.data_ptr<double>() + host.numel());
  DpoPass out;
  out.metrics = pref::DpoSums::from_values(values).mean(s);
  out.pairs = static_cast<std::int64_t>(out.metrics.pairs);
  return out;
}

}  // namespace wireup::train
