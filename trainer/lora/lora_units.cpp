#include "lora/lora_units.hpp"

#include <ATen/ATen.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "lora/peft_adapter.hpp"
#include "ops/fused_ops.hpp"

namespace wireup::train::lora {

std::vector<Target> targets_of(FusedProjection p) {
  switch (p) {
    case FusedProjection::Qkv:
      return {Target::Q, Target::K, Target::V};
    case FusedProjection::Out:
      return {Target::O};
    case FusedProjection::GateUp:
      return {Target::Gate, Target::Up};  // w13: W1 (gate) rows, then W3 (up)
    case FusedProjection::Down:
      return {Target::Down};
  }
  throw std::logic_error("targets_of: unknown projection");
}

ProjectionDims dims_of(Target t, const ModelConfig& m) {
  return projection_dims(t, m.hidden, m.q_dim(), m.kv_dim(), m.intermediate);
}

std::vector<ParamSpec> adapter_specs(const ModelConfig& m, const LoraConfig& c) {
  std::vector<ParamSpec> specs;
  for (Target t : c.targets) {
    const ProjectionDims d = dims_of(t, m);
    specs.push_back({std::string(hf_module(t)) + ".lora_A", {c.rank, d.in}});
    specs.push_back({std::string(hf_module(t)) + ".lora_B", {d.out, c.rank}});
  }
  return specs;
}

std::vector<UnitPlan> with_adapters(std::vector<UnitPlan> base, const ModelConfig& m,
                                    const LoraConfig& c) {
  const std::size_t n = base.size();
  for (std::size_t i = 0; i < n; ++i) {
    base[i].trainable = false;
    if (base[i].layer < 0) continue;
    if (base[i].borrows >= 0)
      throw std::logic_error("with_adapters: unit " + base[i].name + " borrows already");
    UnitPlan adapters{"lora" + std::to_string(base[i].layer), adapter_specs(m, c)};
    adapters.runs = false;
    adapters.layer = base[i].layer;
    base[i].borrows = static_cast<int>(base.size());
    base.push_back(std::move(adapters));
  }
  return base;
}

at::Tensor init_adapters(const UnitPlan& unit, std::uint64_t seed) {
  std::int64_t total = 0;
  for (const auto& s : unit.specs) total += s.numel();
  at::Tensor flat = at::zeros({total}, at::kFloat);
  auto gen = at::detail::createCPUGenerator(seed);
  std::int64_t off = 0;
  for (const auto& s : unit.specs) {
    const bool is_a = s.name.size() >= 7 && s.name.compare(s.name.size() - 7, 7, ".lora_A") == 0;
    if (is_a) {
      // kaiming_uniform_(a = sqrt(5)): bound = sqrt(6 / ((1 + 5) * fan_in)) = 1 / sqrt(fan_in)
      const double bound = 1.0 / std::sqrt(static_cast<double>(s.shape.at(1)));
      flat.narrow(0, off, s.numel()).uniform_(-bound, bound, gen);
    }
    off += s.numel();
  }
  return flat;
}

namespace {

// A dropout mask with keep probability 1 - p over x's elements, scaled by
// 1 / (1 - p): a hash of each element's index and `seed` (splitmix64's
// finaliser), computed where x is, so that the same seed gives the same mask
// on any device and when a block is recomputed.
at::Tensor dropout_scale(const at::Tensor& x, double p, std::uint64_t seed) {
  const auto opts = x.options().dtype(at::kLong);
  at::Tensor z = at::arange(x.numel(), opts).view(x.sizes()) +
                 static_cast<std::int64_t>(seed * 0x9E3779B97F4A7C15ULL);
  z = (z ^ z.__rshift__(30)) * static_cast<std::int64_t>(0xBF58476D1CE4E5B9ULL);
  z = (z ^ z.__rshift__(27)) * static_cast<std::int64_t>(0x94D049BB133111EBULL);
  z = z ^ z.__rshift__(31);
  constexpr std::int64_t kUnit = std::int64_t{1} << 24;
  const at::Tensor keep = (z & (kUnit - 1)) >= static_cast<std::int64_t>(p * kUnit);
  return keep.to(x.scalar_type()) * (1.0 / (1.0 - p));
}

}  // namespace

BlockAdapters::BlockAdapters(const LoraConfig& c, const ModelConfig& m,
                             std::vector<at::Tensor> params, std::uint64_t dropout_seed)
    : c_(c), m_(m), ab_(std::move(params)), dropout_seed_(c.dropout > 0 ? dropout_seed : 0) {
  if (ab_.size() != 2 * c_.targets.size())
    throw std::logic_error("BlockAdapters: " + std::to_string(ab_.size()) + " tensors for " +
                           std::to_string(c_.targets.size()) + " targets");
}

at::Tensor BlockAdapters::delta(FusedProjection p, const at::Tensor& x) const {
  const auto group = targets_of(p);
  std::vector<at::Tensor> parts;
  bool any = false;
  for (Target t : group) {
    std::size_t k = 0;
    while (k < c_.targets.size() && c_.targets[k] != t) ++k;
    if (k == c_.targets.size()) {  // not adapted: zeros in its output rows
      parts.push_back(at::Tensor());
      continue;
    }
    any = true;
    const at::Tensor& a = ab_[2 * k];
    const at::Tensor& b = ab_[2 * k + 1];
    const at::Tensor in =
        dropout_seed_ != 0
            ? x * dropout_scale(x, c_.dropout, dropout_seed_ * 8 + static_cast<std::uint64_t>(t))
            : x;
    parts.push_back(ops::linear(ops::linear(in, a), b) * c_.scale());
  }
  if (!any) return at::Tensor();
  if (group.size() == 1) return parts.front();
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (parts[i].defined()) continue;
    auto shape = x.sizes().vec();
    shape.back() = dims_of(group[i], m_).out;
    parts[i] = at::zeros(shape, x.options());
  }
  return at::cat(parts, -1);
}

}  // namespace wireup::train::lora
