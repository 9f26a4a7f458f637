#include "optim/sharded_adamw.hpp"

#include <ATen/ATen.h>

#include <cmath>

// LibTorch 2.x has the CUDA optimizer's fused AdamW (one pass over the state).
#if __has_include(<ATen/ops/_fused_adamw.h>)
#include <ATen/ops/_fused_adamw.h>
#define WIREUP_HAVE_FUSED_ADAMW 1
#endif

#include "optim/adamw_kernel.hpp"

namespace wireup::train {

ShardedAdamW::ShardedAdamW(std::vector<FlatUnit*> units, AdamWConfig c)
    : units_(std::move(units)), c_(c) {
  for (auto* u : units_) {
    m_.push_back(at::zeros_like(u->master()));
    v_.push_back(at::zeros_like(u->master()));
  }
}

void ShardedAdamW::reset() {
  for (auto& m : m_) m.zero_();
  for (auto& v : v_) v.zero_();
  for (auto* u : units_) u->zero_grad();
  t_ = 0;
}

namespace {

bool plain_cpu_fp32(const at::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == at::kFloat && t.is_contiguous();
}

}  // namespace

void ShardedAdamW::step(double lr, double grad_scale) {
  ++t_;
#ifdef WIREUP_HAVE_FUSED_ADAMW
  if (!units_.empty() && units_.front()->master().is_cuda()) return fused_step(lr, grad_scale);
#endif
  const double bc1 = 1.0 - std::pow(c_.beta1, static_cast<double>(t_));
  const double bc2 = 1.0 - std::pow(c_.beta2, static_cast<double>(t_));
  const AdamWScalars s{static_cast<float>(lr),
                       static_cast<float>(c_.beta1),
                       static_cast<float>(c_.beta2),
                       static_cast<float>(c_.eps),
                       static_cast<float>(c_.weight_decay),
                       static_cast<float>(grad_scale),
                       static_cast<float>(bc1),
                       static_cast<float>(bc2)};
  for (std::size_t i = 0; i < units_.size(); ++i) {
    FlatUnit& u = *units_[i];
    at::Tensor& p = u.master();
    at::Tensor& g = u.grad();
    if (plain_cpu_fp32(p) && plain_cpu_fp32(g)) {  // one fused pass (adamw_kernel.cpp)
      adamw_update(p.data_ptr<float>(), g.data_ptr<float>(), m_[i].data_ptr<float>(),
                   v_[i].data_ptr<float>(), static_cast<std::size_t>(p.numel()), s);
      u.grad_zeroed();  // the kernel zeroes it
      continue;
    }
    if (grad_scale != 1.0) g.mul_(grad_scale);
    p.mul_(1.0 - lr * c_.weight_decay);
    m_[i].mul_(c_.beta1).add_(g, 1.0 - c_.beta1);
    v_[i].mul_(c_.beta2).addcmul_(g, g, 1.0 - c_.beta2);
    at::Tensor denom = (v_[i].sqrt() / std::sqrt(bc2)).add_(c_.eps);
    p.addcdiv_(m_[i], denom, -lr / bc1);
    units_[i]->zero_grad();
  }
}

// GPU shards: one fused kernel for all units, as torch.optim.AdamW(fused=True)
// runs it: reads parameter, gradient and both moments once and writes three
// of them, where the op-by-op update makes about fourteen passes. Its
// grad_scale divides the gradients (AMP's unscale), so clipping passes the
// reciprocal; the step count is read, not advanced, by the kernel.
void ShardedAdamW::fused_step(double lr, double grad_scale) {
#ifdef WIREUP_HAVE_FUSED_ADAMW
  std::vector<at::Tensor> params, grads, steps;
  for (auto* u : units_) {
    params.push_back(u->master());
    grads.push_back(u->grad());
  }
  const auto opts = params.front().options().dtype(at::kFloat);
  const at::Tensor step = at::full({}, static_cast<double>(t_), opts);
  steps.assign(params.size(), step);
  std::optional<at::Tensor> unscale;
  if (grad_scale != 1.0) unscale = at::full({}, 1.0 / grad_scale, opts);
  at::_fused_adamw_(params, grads, m_, v_, {}, steps, lr, c_.beta1, c_.beta2, c_.weight_decay,
                    c_.eps, /*amsgrad=*/false, /*maximize=*/false, unscale, std::nullopt);
  for (auto* u : units_) u->zero_grad();
#else
  (void)lr;
  (void)grad_scale;
#endif
}

double global_grad_norm(const std::vector<FlatUnit*>& units, Comm& shard_comm) {
  double local = 0;
  at::Tensor on_device;  // GPU shards: summed there, one transfer at the end
  for (auto* u : units) {
    const at::Tensor& g = u->grad();
    if (plain_cpu_fp32(g)) {
      local += sum_of_squares(g.data_ptr<float>(), static_cast<std::size_t>(g.numel()));
    } else {
      at::Tensor n = at::linalg_vector_norm(g, 2).to(at::kDouble);
      on_device = on_device.defined() ? on_device.add_(n * n) : n * n;
    }
  }
  at::Tensor sq = scalar_tensor(local, units.front()->master().device());
  if (on_device.defined()) sq.add_(on_device);
  shard_comm.all_reduce_sum(sq);
  return std::sqrt(sq.item<double>());
}

}  // namespace wireup::train
