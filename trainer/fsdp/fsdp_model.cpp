#include "fsdp/fsdp_model.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <functional>
#include <stdexcept>

#include "profile/device_trace.hpp"
#include "profile/step_trace.hpp"

namespace wireup::train {

// What one unit computes, and what its backward needs to run again.
struct FsdpModel::Run {
  FlatUnit* unit = nullptr;
  FlatUnit* next = nullptr;  // gathered ahead in forward
  FlatUnit* prev = nullptr;  // gathered ahead in backward
  // The unit it borrows (UnitPlan::borrows: a tied head's embedding),
  // gathered with it; its gradient from this use goes to that unit (summed
  // there with the owner's own).
  FlatUnit* shared = nullptr;
  FlatUnit* next_shared = nullptr;  // the next unit's borrowed one, gathered ahead too
  std::size_t index = 0;
  const UnitCompute* compute = nullptr;
  at::Tensor run(const std::vector<at::Tensor>& p, const at::Tensor& x) const {
    return (*compute)(index, p, x);
  }
  bool checkpoint = false;
  bool keep_after_forward = false;    // the last unit: backward starts with it
  bool backward_reads_params = true;  // UnitPlan's
  bool trainable = true;              // UnitPlan's: its own parameters get gradients
  bool shared_trainable = false;      // the borrowed unit's do
  bool prefetch = true;
  // Without checkpointing: the unit's graph, kept from forward to backward.
  at::Tensor input, output;
  std::vector<at::Tensor> leaves;
};

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;
using UnitRun = FsdpModel::Run;

// Leaves that share the gathered views' memory but not their version counter:
// the backward regather writes the same values into that memory again, which
// autograd would otherwise take for an in-place change of a saved tensor.
// A frozen unit's leaves take no gradient.
at::Tensor leaf_of(const at::Tensor& view, bool trained) {
  return view.variable_data().requires_grad_(trained);
}

// What a unit computes with: its own parameters, then the shared unit's.
std::vector<at::Tensor> params_of(UnitRun& run) {
  std::vector<at::Tensor> p = run.unit->params();
  if (run.shared)
    for (const auto& t : run.shared->params()) p.push_back(t);
  return p;
}

std::vector<at::Tensor> make_leaves(UnitRun& run) {
  const auto views = params_of(run);
  const std::size_t own = run.unit->specs().size();
  std::vector<at::Tensor> leaves;
  for (std::size_t i = 0; i < views.size(); ++i)
    leaves.push_back(leaf_of(views[i], i < own ? run.trainable : run.shared_trainable));
  return leaves;
}

// Whether a unit's backward has anything to compute: a gradient for its
// parameters or its borrowed unit's, or for its input (a frozen embedding's
// input is the token ids: nothing).
bool backward_has_work(const UnitRun& run, const at::Tensor& input) {
  return run.trainable || run.shared_trainable || input.is_floating_point();
}

struct UnitFunction : public torch::autograd::Function<UnitFunction> {
  // `anchor` requires grad so that every unit, the embedding included, is a
  // node of the graph: the parameters themselves are not inputs here.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& anchor,
                            UnitRun* run) {
    (void)anchor;
    const UnitScope scope(run->unit->index());
    const TraceSpan span("forward");
    ctx->saved_data["run"] = reinterpret_cast<std::int64_t>(run);
    const auto params = params_of(*run);
    if (run->prefetch && run->next) run->next->gather_async();
    if (run->prefetch && run->next_shared) run->next_shared->gather_async();
    at::Tensor y;
    DeviceSpan on_device("forward", compute_stream());  // the work, on a GPU
    if (run->checkpoint) {
      at::NoGradGuard no_grad;
      y = run->run(params, x);
      run->input = x;
    } else {
      at::AutoGradMode grad_on(true);
      run->input = x.is_floating_point() ? x.detach().requires_grad_(true) : x;
      run->leaves = make_leaves(*run);
      run->output = run->run(run->leaves, run->input);
      y = run->output.detach();
    }
    on_device.end();
    if (!run->keep_after_forward) {
      run->unit->release();
      if (run->shared) run->shared->release();
    }
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* run = reinterpret_cast<UnitRun*>(ctx->saved_data["run"].toInt());
    FlatUnit& u = *run->unit;
    const UnitScope scope(u.index());
    const TraceSpan span("backward");
    if (!backward_has_work(*run, run->input)) {  // a frozen embedding
      run->input = run->output = at::Tensor();
      run->leaves.clear();
      return {at::Tensor(), at::Tensor(), at::Tensor()};
    }
    if (run->backward_reads_params)
      params_of(*run);  // regathered into the memory the graph refers to
    if (run->prefetch && run->prev) run->prev->gather_async();
    at::Tensor input = run->input;
    {
      const DeviceSpan on_device("backward", compute_stream());  // the work, on a GPU
      at::AutoGradMode grad_on(true);
      if (run->checkpoint) {
        if (input.is_floating_point()) input = input.detach().requires_grad_(true);
        run->leaves = make_leaves(*run);
        run->output = run->run(run->leaves, input);
      }
      // The leaves start without gradients, so autograd hands each its
      // gradient tensor as computed: no zeroed buffer to add into.
      torch::autograd::backward({run->output}, {grads[0]});
    }
    u.release();
    std::vector<at::Tensor> param_grads, shared_grads;
    for (std::size_t i = 0; i < run->leaves.size(); ++i)
      (i < u.specs().size() ? param_grads : shared_grads).push_back(run->leaves[i].grad());
    if (run->trainable) u.accumulate_grads(param_grads);
    if (run->shared) {
      // Reduce-scattered now, in the background like any unit's; the
      // embedding's backward adds the lookup's gradient to the same shard.
      run->shared->release();
      if (run->shared_trainable) run->shared->accumulate_grads(shared_grads);
    }
    at::Tensor gx = input.is_floating_point() ? input.grad() : at::Tensor();
    run->input = run->output = at::Tensor();
    run->leaves.clear();
    return {gx, at::Tensor(), at::Tensor()};
  }
};

std::shared_ptr<Comm> shard_of(const CommGroups& g) { return g.shard; }

}  // namespace

FsdpModel::FsdpModel(std::vector<UnitPlan> plan, const CommGroups& g, const FsdpOptions& o)
    : plan_(std::move(plan)), opt_(o) {
  for (const auto& p : plan_) {
    const UnitUse use = p.trainable || o.use == UnitUse::Inference ? o.use : UnitUse::Frozen;
    auto u = std::make_unique<FlatUnit>(p.name, p.specs, shard_of(g), g.replicate, o.compute_dtype,
                                        o.device, use);
    u->set_index(static_cast<int>(units_.size()));
    units_.push_back(std::move(u));
  }
}

FsdpModel::~FsdpModel() = default;

std::int64_t FsdpModel::state_bytes() const {
  std::int64_t n = 0;
  for (const auto& u : units_) {
    const std::int64_t held = u->shard_numel() * u->master().element_size();
    // fp32 master, gradient, exp_avg, exp_avg_sq; frozen or inference: the master alone
    n += u->has_grad() ? 4 * held : held;
  }
  return n;
}

at::Tensor FsdpModel::forward(const at::Tensor& input, const UnitCompute& compute,
                              bool for_backward) {
  if (for_backward && opt_.use == UnitUse::Inference)
    throw std::logic_error("FsdpModel::forward: a backward pass on a model built for inference");
  // The units that run, in order (held units are computed with by their borrower).
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < plan_.size(); ++i)
    if (plan_[i].runs) order.push_back(i);
  const std::size_t n = order.size();
  auto unit = [&](int i) { return i >= 0 ? units_[static_cast<std::size_t>(i)].get() : nullptr; };
  compute_ = compute;
  runs_.assign(n, Run{});
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = order[k];
    Run& r = runs_[k];
    r.unit = units_[i].get();
    r.index = i;
    r.compute = &compute_;
    r.next = k + 1 < n ? units_[order[k + 1]].get() : nullptr;
    // gathered ahead in backward only when its backward reads its parameters
    r.prev =
        k > 0 && plan_[order[k - 1]].backward_reads_params ? units_[order[k - 1]].get() : nullptr;
    r.backward_reads_params = plan_[i].backward_reads_params;
    r.trainable = plan_[i].trainable;
    r.prefetch = opt_.prefetch;
    r.keep_after_forward = for_backward && k + 1 == n;
    r.shared = unit(plan_[i].borrows);
    r.shared_trainable =
        plan_[i].borrows >= 0 && plan_[static_cast<std::size_t>(plan_[i].borrows)].trainable;
    r.next_shared = k + 1 < n ? unit(plan_[order[k + 1]].borrows) : nullptr;
    r.checkpoint = opt_.activation_checkpointing && plan_[i].recompute;
  }

  if (!for_backward) {  // evaluation: no graph, each unit gathered, used, freed
    at::NoGradGuard no_grad;
    at::Tensor x = input;
    for (std::size_t k = 0; k < n; ++k) {
      const auto p = params_of(runs_[k]);
      if (opt_.prefetch && runs_[k].next) runs_[k].next->gather_async();
      if (opt_.prefetch && runs_[k].next_shared) runs_[k].next_shared->gather_async();
      x = runs_[k].run(p, x);
      runs_[k].unit->release();
      if (runs_[k].shared) runs_[k].shared->release();
    }
    runs_.clear();
    compute_ = nullptr;
    return x;
  }

  at::Tensor anchor = at::zeros({0}, at::TensorOptions().device(opt_.device)).requires_grad_(true);
  at::Tensor x = input;
  for (std::size_t k = 0; k < n; ++k) x = UnitFunction::apply(x, anchor, &runs_[k]);
  return x;
}

void FsdpModel::backward(const at::Tensor& loss, double scale) {
  loss.mul(scale).backward();
  for (auto& u : units_) u->finish_grads();  // reduce-scatters overlapped the backward
  runs_.clear();
  compute_ = nullptr;
}

}  // namespace wireup::train
