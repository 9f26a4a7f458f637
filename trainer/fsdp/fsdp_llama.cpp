#include "fsdp/fsdp_llama.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/csrc/autograd/custom_function.h>

#include <functional>
#include <stdexcept>

#include "profile/device_trace.hpp"
#include "profile/step_trace.hpp"

namespace wireup::train {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What one unit computes, and what its backward needs to run again.
struct UnitRun {
  FlatUnit* unit = nullptr;
  FlatUnit* next = nullptr;  // gathered ahead in forward
  FlatUnit* prev = nullptr;  // gathered ahead in backward
  // Tied embeddings: the head's output projection is the embedding unit's
  // matrix, gathered with the head; its gradient from this use goes to that
  // unit (summed there with the lookup's own).
  FlatUnit* shared = nullptr;
  FlatUnit* next_shared = nullptr;  // the next unit's shared one, gathered ahead too
  std::function<at::Tensor(const std::vector<at::Tensor>&, const at::Tensor&)> compute;
  bool checkpoint = false;
  bool keep_after_forward = false;    // the last unit: backward starts with it
  bool backward_reads_params = true;  // not the embedding: its backward is a scatter
  bool prefetch = true;
  // Without checkpointing: the unit's graph, kept from forward to backward.
  at::Tensor input, output;
  std::vector<at::Tensor> leaves;
};

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
      y = run->compute(params, x);
      run->input = x;
    } else {
      at::AutoGradMode grad_on(true);
      run->input = x.is_floating_point() ? x.detach().requires_grad_(true) : x;
      run->leaves = make_leaves(params);
      run->output = run->compute(run->leaves, run->input);
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
        run->output = run->compute(run->leaves, input);
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

FsdpLlama::FsdpLlama(const ModelConfig& m, const CommGroups& g, const FsdpOptions& o,
                     std::uint64_t seed)
    : cfg_(m),
      opt_(o),
      rope_(llama::rope_to(llama::make_rope(m, m.context, llama::attention_needs_mask(o.device)),
                           o.device)) {
  if (rope_.causal.defined())
    rope_.causal = rope_.causal.to(o.compute_dtype);  // added to the scores in that dtype
  auto add = [&](const std::string& name, std::vector<ParamSpec> specs) {
    auto u = std::make_unique<FlatUnit>(name, std::move(specs), shard_of(g), g.replicate,
                                        o.compute_dtype, o.device, o.use);
    u->set_index(static_cast<int>(units_.size()));
    units_.push_back(std::move(u));
  };
  add("embedding", llama::embedding_specs(m));
  for (std::int64_t i = 0; i < m.layers; ++i)
    add("block" + std::to_string(i), llama::block_specs(m));
  add("head", llama::head_specs(m));
  if (o.random_init) initialize(seed);
}

void FsdpLlama::initialize(std::uint64_t seed) {
  for (std::size_t i = 0; i < units_.size(); ++i)
    units_[i]->load_full(llama::init_unit(units_[i]->specs(), cfg_, seed * 1000003ULL + i));
}

std::int64_t FsdpLlama::state_bytes() const {
  std::int64_t n = 0;
  for (const auto& u : units_) n += u->shard_numel();
  if (opt_.use == UnitUse::Inference) return n * 4;  // fp32 master
  return n * 4 * 4;                                  // fp32 master, gradient, exp_avg, exp_avg_sq
}

const llama::DocumentAttentionChoice& FsdpLlama::document_attention() {
  if (!document_attention_)
    document_attention_ =
        llama::document_attention_for(opt_.device, opt_.compute_dtype, cfg_.head_dim());
  return *document_attention_;
}

double FsdpLlama::step(const at::Tensor& tokens, bool backward, double grad_scale) {
  return step(ModelBatch{tokens}, backward, grad_scale);
}

double FsdpLlama::step(const ModelBatch& batch, bool backward, double grad_scale,
                       double loss_divisor) {
  if (backward && opt_.use == UnitUse::Inference)
    throw std::logic_error("FsdpLlama::step: a backward pass on a model built for inference");
  const at::Tensor& host_tokens = batch.tokens;
  // Ids index the embedding and pick the logits: check them here, on the host
  // (on a GPU a check there would stall the step on a device-to-host copy).
  const auto [lo, hi] = at::aminmax(host_tokens);
  TORCH_CHECK(lo.item<std::int64_t>() >= 0 && hi.item<std::int64_t>() < cfg_.vocab,
              "token id outside the vocabulary of ", cfg_.vocab, " (--vocab_size)");
  const at::Tensor tokens = host_tokens.to(opt_.device);
  const auto T = tokens.size(1) - 1;
  at::Tensor inputs = tokens.narrow(1, 0, T);
  at::Tensor targets = tokens.narrow(1, 1, T);
  const at::Tensor trained =
      batch.masked() ? batch.trained.to(opt_.device) : at::Tensor();  // undefined: every target
  llama::Documents docs;
  if (batch.segments.defined()) {
    const at::Tensor positions = batch.positions.to(opt_.device);
    docs =
        document_attention().path == DocumentAttention::VarlenFlash
            ? llama::Documents{positions, llama::varlen_documents(batch.cu_seqlens.to(opt_.device),
                                                                  batch.max_seqlen)}
            : llama::make_documents(positions, batch.segments.to(opt_.device), opt_.compute_dtype);
  }
  const std::size_t n = units_.size();
  std::vector<UnitRun> runs(n);
  for (std::size_t i = 0; i < n; ++i) {
    UnitRun& r = runs[i];
    r.unit = units_[i].get();
    r.next = i + 1 < n ? units_[i + 1].get() : nullptr;
    r.prev = i > 1 ? units_[i - 1].get() : nullptr;  // the embedding is not regathered
    r.backward_reads_params = i > 0;
    r.prefetch = opt_.prefetch;
    r.keep_after_forward = backward && i + 1 == n;
    if (cfg_.tied && i + 1 == n) r.shared = units_.front().get();
    if (cfg_.tied && i + 2 == n) r.next_shared = units_.front().get();
    // Blocks only: recomputing the embedding or the head saves little.
    r.checkpoint = opt_.activation_checkpointing && i > 0 && i + 1 < n;
    if (i == 0) {
      r.compute = [](const std::vector<at::Tensor>& p, const at::Tensor& x) {
        return llama::embed(p, x);
      };
    } else if (i + 1 < n) {
      r.compute = [this, docs](const std::vector<at::Tensor>& p, const at::Tensor& x) {
        return llama::block(p, x, rope_, cfg_, opt_.float8, docs);
      };
    } else {
      r.compute = [this, targets, trained, loss_divisor](const std::vector<at::Tensor>& p,
                                                         const at::Tensor& x) {
        return llama::head_loss(p, x, targets, cfg_, trained, loss_divisor);
      };
    }
  }

  if (!backward) {  // evaluation: no graph, each unit gathered, used, freed
    at::NoGradGuard no_grad;
    at::Tensor x = inputs;
    for (std::size_t i = 0; i < n; ++i) {
      const auto p = params_of(runs[i]);
      if (opt_.prefetch && runs[i].next) runs[i].next->gather_async();
      x = runs[i].compute(p, x);
      units_[i]->release();
      if (runs[i].shared) runs[i].shared->release();
    }
    return x.item<double>();
  }

  at::Tensor anchor = at::zeros({0}, at::TensorOptions().device(opt_.device)).requires_grad_(true);
  at::Tensor x = inputs;
  for (std::size_t i = 0; i < n; ++i) x = UnitFunction::apply(x, anchor, &runs[i]);
  const double loss = x.item<double>();
  x.mul(grad_scale).backward();
  for (auto& u : units_) u->finish_grads();  // reduce-scatters overlapped the backward
  return loss;
}

}  // namespace wireup::train
