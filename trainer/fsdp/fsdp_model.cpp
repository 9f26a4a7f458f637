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
at::Tensor leaf_of(const at::Tensor& view) { return view.variable_data().requires_grad_(true); }

std::vector<at::Tensor> make_leaves(const std::vector<at::Tensor>& views) {
  std::vector<at::Tensor> leaves;
  for (const auto& v : views) leaves.push_back(leaf_of(v));
  return leaves;
}

// What a unit computes with: its own parameters, then the shared unit's.
std::vector<at::Tensor> params_of(UnitRun& run) {
  std::vector<at::Tensor> p = run.unit->params();
  if (run.shared)
    for (const auto& t : run.shared->params()) p.push_back(t);
  return p;
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
      run->leaves = make_leaves(params);
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
    if (run->backward_reads_params)
      params_of(*run);  // regathered into the memory the graph refers to
    if (run->prefetch && run->prev) run->prev->gather_async();
    at::Tensor input = run->input;
    {
      const DeviceSpan on_device("backward", compute_stream());  // the work, on a GPU
      at::AutoGradMode grad_on(true);
      if (run->checkpoint) {
        if (input.is_floating_point()) input = input.detach().requires_grad_(true);
        run->leaves = make_leaves(params_of(*run));
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
    u.accumulate_grads(param_grads);
    if (run->shared) {
      // Reduce-scattered now, in the background like any unit's; the
      // embedding's backward adds the lookup's gradient to the same shard.
      run->shared->release();
      run->shared->accumulate_grads(shared_grads);
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
    auto u = std::make_unique<FlatUnit>(p.name, p.specs, shard_of(g), g.replicate, o.compute_dtype,
                                        o.device, o.use);
    u->set_index(static_cast<int>(units_.size()));
    units_.push_back(std::move(u));
  }
}

FsdpModel::~FsdpModel() = default;

std::int64_t FsdpModel::state_bytes() const {
  std::int64_t n = 0;
  for (const auto& u : units_) n += u->shard_numel();
  if (opt_.use == UnitUse::Inference) return n * 4;  // fp32 master
  return n * 4 * 4;                                  // fp32 master, gradient, exp_avg, exp_avg_sq
}

at::Tensor FsdpModel::forward(const at::Tensor& input, const UnitCompute& compute,
                              bool for_backward) {
  if (for_backward && opt_.use == UnitUse::Inference)
    throw std::logic_error("FsdpModel::forward: a backward pass on a model built for inference");
  const std::size_t n = units_.size();
  auto unit = [&](int i) { return i >= 0 ? units_[static_cast<std::size_t>(i)].get() : nullptr; };
  compute_ = compute;
  runs_.assign(n, Run{});
  for (std::size_t i = 0; i < n; ++i) {
    Run& r = runs_[i];
    r.unit = units_[i].get();
    r.index = i;
    r.compute = &compute_;
    r.next = i + 1 < n ? units_[i + 1].get() : nullptr;
    // gathered ahead in backward only when its backward reads its parameters
    r.prev = i > 0 && plan_[i - 1].backward_reads_params ? units_[i - 1].get() : nullptr;
    r.backward_reads_params = plan_[i].backward_reads_params;
    r.prefetch = opt_.prefetch;
    r.keep_after_forward = for_backward && i + 1 == n;
    r.shared = unit(plan_[i].borrows);
    r.next_shared = i + 1 < n ? unit(plan_[i + 1].borrows) : nullptr;
    r.checkpoint = opt_.activation_checkpointing && plan_[i].recompute;
  }

  if (!for_backward) {  // evaluation: no graph, each unit gathered, used, freed
    at::NoGradGuard no_grad;
    at::Tensor x = input;
    for (std::size_t i = 0; i < n; ++i) {
      const auto p = params_of(runs_[i]);
      if (opt_.prefetch && runs_[i].next) runs_[i].next->gather_async();
      x = runs_[i].run(p, x);
      units_[i]->release();
      if (runs_[i].shared) runs_[i].shared->release();
    }
    runs_.clear();
    compute_ = nullptr;
    return x;
  }

  at::Tensor anchor = at::zeros({0}, at::TensorOptions().device(opt_.device)).requires_grad_(true);
  at::Tensor x = input;
  for (std::size_t i = 0; i < n; ++i) x = UnitFunction::apply(x, anchor, &runs_[i]);
  return x;
}

void FsdpModel::backward(const at::Tensor& loss, double scale) {
  loss.mul(scale).backward();
  for (auto& u : units_) u->finish_grads();  // reduce-scatters overlapped the backward
  runs_.clear();
  compute_ = nullptr;
}

}  // namespace wireup::train
