#include "models/sharded_model.hpp"

#include <ATen/ATen.h>

#include "models/model_registry.hpp"

namespace wireup::train {

ShardedModel::ShardedModel(const ModelConfig& m, const ModelSpec& spec, const CommGroups& g,
                           const ModelOptions& o, std::uint64_t seed)
    : cfg_(m), spec_(spec), fsdp_(spec.units(m), g, o.fsdp), compute_(spec.compute(m, o)) {
  if (o.random_init) initialize(seed);
}

ShardedModel::ShardedModel(const ModelConfig& m, const CommGroups& g, const ModelOptions& o,
                           std::uint64_t seed)
    : ShardedModel(m, model_spec(m), g, o, seed) {}

void ShardedModel::initialize(std::uint64_t seed) {
  auto& units = fsdp_.units();
  for (std::size_t i = 0; i < units.size(); ++i)
    units[i]->load_full(spec_.init_unit(fsdp_.plan()[i], cfg_, seed * 1000003ULL + i));
}

double ShardedModel::step(const at::Tensor& tokens, bool backward, double grad_scale) {
  return step(ModelBatch{tokens}, backward, grad_scale);
}

double ShardedModel::step(const ModelBatch& batch, bool backward, double grad_scale,
                          double loss_divisor) {
  const ModelCompute::Step s = compute_->prepare(batch, loss_divisor);
  const at::Tensor loss = fsdp_.forward(s.input, s.compute, backward);
  const double value = loss.item<double>();
  if (backward) fsdp_.backward(loss, grad_scale);
  return value;
}

}  // namespace wireup::train
