#include "models/sharded_model.hpp"

#include <ATen/ATen.h>

#include "lora/lora_units.hpp"
#include "models/model_registry.hpp"

namespace wireup::train {

namespace {

// The family's units; with LoRA, frozen, and the adapters' held units after them.
std::vector<UnitPlan> plan_of(const ModelConfig& m, const ModelSpec& spec, const ModelOptions& o) {
  std::vector<UnitPlan> units = spec.units(m);
  return o.lora.enabled() ? lora::with_adapters(std::move(units), m, o.lora) : units;
}

}  // namespace

ShardedModel::ShardedModel(const ModelConfig& m, const ModelSpec& spec, const CommGroups& g,
                           const ModelOptions& o, std::uint64_t seed)
    : cfg_(m),
      spec_(spec),
      base_units_(spec.units(m).size()),
      fsdp_(plan_of(m, spec, o), g, o.fsdp),
      compute_(spec.compute(m, o)) {
  if (o.random_init) initialize(seed);
  for (auto& u : fsdp_.units()) {
    if (u->has_grad()) trainable_.push_back(u.get());
    if (static_cast<std::size_t>(u->index()) < base_units_) base_.push_back(u.get());
  }
}

ShardedModel::ShardedModel(const ModelConfig& m, const CommGroups& g, const ModelOptions& o,
                           std::uint64_t seed)
    : ShardedModel(m, model_spec(m), g, o, seed) {}

void ShardedModel::initialize(std::uint64_t seed) {
  auto& units = fsdp_.units();
  for (std::size_t i = 0; i < units.size(); ++i) {
    const UnitPlan& plan = fsdp_.plan()[i];
    const std::uint64_t unit_seed = seed * 1000003ULL + i;
    units[i]->load_full(i < base_units_ ? spec_.init_unit(plan, cfg_, unit_seed)
                                        : lora::init_adapters(plan, unit_seed));
  }
}

void ShardedModel::initialize_adapters(std::uint64_t seed) {
  auto& units = fsdp_.units();
  for (std::size_t i = base_units_; i < units.size(); ++i)
    units[i]->load_full(lora::init_adapters(fsdp_.plan()[i], seed * 1000003ULL + i));
}

double ShardedModel::step(const at::Tensor& tokens, bool backward, double grad_scale) {
  return step(ModelBatch{tokens}, backward, grad_scale);
}

double ShardedModel::step(const ModelBatch& batch, bool backward, double grad_scale,
                          double loss_divisor) {
  const ModelCompute::Step s = compute_->prepare(batch, loss_divisor, backward);
  const at::Tensor loss = fsdp_.forward(s.input, s.compute, backward);
  const double value = loss.item<double>();
  if (backward) fsdp_.backward(loss, grad_scale);
  return value;
}

}  // namespace wireup::train
