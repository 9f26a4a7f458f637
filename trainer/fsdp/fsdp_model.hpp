#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <vector>

#include "fsdp/flat_unit.hpp"
#include "fsdp/unit_plan.hpp"

namespace wireup::train {

struct FsdpOptions {
  bool activation_checkpointing = false;      // recompute the units whose plan allows it
  bool prefetch = true;                       // gather unit i+1 (i-1 in backward) while i computes
  at::ScalarType compute_dtype = at::kFloat;  // bf16 on GPU
  at::Device device = at::kCPU;
  // Inference (eval, generate): the units keep no gradient shard (FlatUnit's
  // UnitUse), and backward() is refused.
  UnitUse use = UnitUse::Training;
};

// What unit `unit` computes from its gathered parameters (its own, then those
// of the unit it borrows) and its input (the previous unit's output): the
// model's, for one micro-batch.
using UnitCompute = std::function<at::Tensor(
    std::size_t unit, const std::vector<at::Tensor>& params, const at::Tensor& x)>;

// Fully sharded data parallelism over the units a model hands it, run in
// order: forward and backward gather each unit just in time and free it
// after; each unit's gradient is reduce-scattered into its fp32 shard as soon
// as it exists. A unit that borrows another (a tied head) gathers it with its
// own, and that unit's gradient is the sum of both uses (the borrower's part
// reduce-scattered when the borrower's backward ends, the owner's at the end
// of backward): one parameter, stored and updated once.
class FsdpModel {
 public:
  FsdpModel(std::vector<UnitPlan> plan, const CommGroups& groups, const FsdpOptions& o);
  ~FsdpModel();
  FsdpModel(const FsdpModel&) = delete;
  FsdpModel& operator=(const FsdpModel&) = delete;

  // Runs the units in order on `input`, unit i's output the input of unit
  // i+1, and returns the last one's (a scalar: the loss). With `for_backward`
  // each unit's graph (or, recomputed, its input) is kept for backward();
  // without, nothing is kept and each unit is freed as soon as it ran.
  at::Tensor forward(const at::Tensor& input, const UnitCompute& compute, bool for_backward);
  // Adds the gradient of loss*scale to every unit's grad(), `loss` the last
  // forward(for_backward = true)'s output.
  void backward(const at::Tensor& loss, double scale);

  std::vector<std::unique_ptr<FlatUnit>>& units() { return units_; }
  const std::vector<UnitPlan>& plan() const { return plan_; }
  const FsdpOptions& options() const { return opt_; }

  // Parameters + gradients + AdamW moments this rank holds, in bytes (built
  // for inference: the parameters alone).
  std::int64_t state_bytes() const;

  // What one unit computes in a forward, and what its backward needs again
  // (fsdp_model.cpp).
  struct Run;

 private:
  std::vector<UnitPlan> plan_;
  FsdpOptions opt_;
  std::vector<std::unique_ptr<FlatUnit>> units_;
  UnitCompute compute_;    // the last forward's, kept for backward()
  std::vector<Run> runs_;  // the same
};

}  // namespace wireup::train
