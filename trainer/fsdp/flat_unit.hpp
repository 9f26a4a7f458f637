#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/comm.hpp"
#include "fsdp/param_spec.hpp"

namespace wireup::train {

// What a unit is built for: training keeps an fp32 gradient shard beside the
// master shard, allocated with it; inference (eval, generate) keeps none; a
// frozen unit (a base under LoRA) keeps none either, and its shard is held in
// the compute dtype (bf16 on a GPU with --bf16 1: 2 bytes a parameter).
enum class UnitUse { Training, Inference, Frozen };

// One FSDP unit: its parameters flattened into one buffer padded to a
// multiple of the shard group size. This rank keeps only its slice, in fp32
// (master weights, and for training the gradient); the full buffer exists
// between gather() and release() only, in the compute dtype.
class FlatUnit {
 public:
  FlatUnit(std::string name, std::vector<ParamSpec> specs, std::shared_ptr<Comm> shard_comm,
           std::shared_ptr<Comm> replicate_comm, at::ScalarType compute_dtype,
           at::Device device = at::kCPU, UnitUse use = UnitUse::Training);

  const std::string& name() const { return name_; }
  // Its place in the model (0: the embedding), which its collectives carry
  // into the flight recorder and the step trace (profile/step_trace.hpp).
  int index() const { return index_; }
  void set_index(int i) { index_ = i; }
  const std::vector<ParamSpec>& specs() const { return specs_; }
  std::int64_t numel() const { return numel_; }        // real parameters
  std::int64_t shard_numel() const { return shard_; }  // this rank's slice, padding included
  std::int64_t shard_offset() const;                   // of this rank's slice in the flat buffer

  // [shard_numel]: fp32, or a frozen unit's in the compute dtype
  at::Tensor& master() { return master_; }
  // Whether this unit holds a gradient shard (built for training).
  bool has_grad() const { return grad_.defined(); }
  // fp32 [shard_numel]: this rank's slice of the accumulated gradient; a unit
  // built for inference has none (std::logic_error naming the unit).
  at::Tensor& grad() {
    if (!grad_.defined()) no_grad_error();
    return grad_;
  }
  // Zeroes grad(); the next accumulation then copies into it instead of
  // adding (one read of the buffer less per step).
  void zero_grad() {
    grad().zero_();
    grad_zero_ = true;
  }
  // For code that zeroed grad() itself (the fused AdamW kernel).
  void grad_zeroed() { grad_zero_ = true; }

  // Sets this rank's slice from the full unsharded values (same on every rank).
  void load_full(const at::Tensor& flat_fp32);
  // The same from a writer of the full values: `fill(flat)` sets every
  // element of a CPU fp32 [numel] buffer, which is this rank's slice itself
  // when that is the whole unit in host memory (one rank: nothing staged).
  void load_full(const std::function<void(at::Tensor& flat)>& fill);

  // Start gathering the full buffer (no-op if it is already here or coming).
  void gather_async();
  // The parameters as views of the gathered buffer; waits for the gather.
  const std::vector<at::Tensor>& params();
  // Frees the full buffer's memory; views taken before stay valid objects and
  // see the data again after the next gather (FSDP's storage trick).
  void release();
  // Whether a full buffer besides the shard holds memory now.
  bool gathered() const { return !aliased_ && state_ != State::Released; }
  // A shard group of one in fp32: the parameters are views of master() itself,
  // gathering and releasing are nothing.
  bool aliased() const { return aliased_; }

  // Adds one backward pass's parameter gradients (in specs() order, compute
  // dtype; undefined = zero): summed over the shard group into this rank's
  // slice, then over the replicate group, added to grad() in fp32. The shard
  // group's part runs in the background until finish_grads(). A lone rank
  // (no group to sum with) adds them straight into grad()'s views. A unit
  // built for inference refuses (std::logic_error).
  void accumulate_grads(const std::vector<at::Tensor>& param_grads);
  void finish_grads();

 private:
  enum class State { Released, Gathering, Ready };
  void allocate_full();
  [[noreturn]] void no_grad_error() const;

  std::string name_;
  std::vector<ParamSpec> specs_;
  std::shared_ptr<Comm> shard_comm_, replicate_comm_;
  at::ScalarType dtype_;
  at::Device device_;
  std::int64_t numel_ = 0, padded_ = 0, shard_ = 0;
  at::Tensor master_, grad_;  // grad_ undefined for UnitUse::Inference
  bool grad_zero_ = true;     // grad_ holds zeros (set only right after zeroing it)
  at::Tensor full_;           // [padded], compute dtype; storage emptied when released
  at::Tensor send_;           // the shard in compute dtype (aliases master_ in fp32)
  std::vector<at::Tensor> views_;
  std::vector<at::Tensor> grad_views_;  // of grad_, when aliased_
  bool solo_ = false;                   // aliased_, and no replicas to sum with
  std::unique_ptr<Pending> pending_;
  // A reduce-scatter in flight: its input (kept alive), output and handle.
  at::Tensor rs_full_, rs_part_;
  std::unique_ptr<Pending> rs_pending_;
  State state_ = State::Released;
  bool aliased_ = false;
  int index_ = -1;
};

}  // namespace wireup::train
