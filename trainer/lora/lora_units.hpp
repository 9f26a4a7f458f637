#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "fsdp/unit_plan.hpp"
#include "lora/lora_config.hpp"
#include "lora/peft_adapter.hpp"
#include "models/model_config.hpp"

// LoRA on FSDP units: the base's units frozen, one held unit of adapters per
// decoder layer, borrowed by that layer's block (fsdp/unit_plan.hpp), and the
// adapters' part of a block's projections. For the decoders built on the
// Llama skeleton (Llama, Qwen3, Qwen2.5), whose block computes the seven
// projections as four GEMMs.
namespace wireup::train::lora {

// The block's projections as its GEMMs group them, and the targets of each in
// the order of the GEMM's output rows.
enum class FusedProjection { Qkv, Out, GateUp, Down };
std::vector<Target> targets_of(FusedProjection p);

// Target t's input and output widths in a block of model m.
ProjectionDims dims_of(Target t, const ModelConfig& m);

// One layer's adapters, in c.targets order: "<hf_module>.lora_A" [rank, in]
// then "<hf_module>.lora_B" [out, rank].
std::vector<ParamSpec> adapter_specs(const ModelConfig& m, const LoraConfig& c);

// `base` (a family's units) with every unit frozen and, for each unit that
// computes a decoder layer (UnitPlan::layer), a held unit "lora<layer>" of
// its adapters after the base's, borrowed by it. A unit that borrows already
// (a tied head) computes no layer.
std::vector<UnitPlan> with_adapters(std::vector<UnitPlan> base, const ModelConfig& m,
                                    const LoraConfig& c);

// An adapter unit's initial values, flat fp32, as PEFT initialises them: A
// kaiming-uniform (nn.Linear's default: U(-1/sqrt(in), 1/sqrt(in))), B zeros,
// so that the adapted model starts equal to the base. The same on every rank
// and world size for a seed.
at::Tensor init_adapters(const UnitPlan& unit, std::uint64_t seed);

// One block's adapters at compute time: the A and B of each target (the held
// unit's parameters, gathered), and for training with dropout a seed that
// fixes the masks (the same again when the block is recomputed).
class BlockAdapters {
 public:
  BlockAdapters(const LoraConfig& c, const ModelConfig& m, std::vector<at::Tensor> params,
                std::uint64_t dropout_seed);
  // scale * B (A dropout(x)) for the targets of p, side by side in p's output
  // order (zeros for an untargeted one); undefined when p has no target.
  at::Tensor delta(FusedProjection p, const at::Tensor& x) const;

 private:
  const LoraConfig& c_;
  const ModelConfig& m_;
  std::vector<at::Tensor> ab_;  // A, B per target, c_.targets order
  std::uint64_t dropout_seed_;  // 0: no dropout (evaluation)
};

}  // namespace wireup::train::lora
