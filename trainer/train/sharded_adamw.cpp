#include "sharded_adamw.hpp"

#include <ATen/ATen.h>

#include <cmath>

namespace wireup::train {

ShardedAdamW::ShardedAdamW(std::vector<FlatUnit*> units, AdamWConfig c)
    : units_(std::move(units)), c_(c) {
  for (auto* u : units_) {
    m_.push_back(at::zeros_like(u->master()));
    v_.push_back(at::zeros_like(u->master()));
  }
}

void ShardedAdamW::step(double lr, double grad_scale) {
  ++t_;
  const double bc1 = 1.0 - std::pow(c_.beta1, static_cast<double>(t_));
  const double bc2 = 1.0 - std::pow(c_.beta2, static_cast<double>(t_));
  for (std::size_t i = 0; i < units_.size(); ++i) {
    at::Tensor& p = units_[i]->master();
    at::Tensor& g = units_[i]->grad();
    if (grad_scale != 1.0) g.mul_(grad_scale);
    p.mul_(1.0 - lr * c_.weight_decay);
    m_[i].mul_(c_.beta1).add_(g, 1.0 - c_.beta1);
    v_[i].mul_(c_.beta2).addcmul_(g, g, 1.0 - c_.beta2);
    at::Tensor denom = (v_[i].sqrt() / std::sqrt(bc2)).add_(c_.eps);
    p.addcdiv_(m_[i], denom, -lr / bc1);
    g.zero_();
  }
}

double global_grad_norm(const std::vector<FlatUnit*>& units, Comm& shard_comm) {
  at::Tensor sq = scalar_tensor(0.0, units.front()->grad().device());
  for (auto* u : units) sq.add_(u->grad().to(at::kDouble).pow(2).sum());
  shard_comm.all_reduce_sum(sq);
  return std::sqrt(sq.item<double>());
}

}  // namespace wireup::train
