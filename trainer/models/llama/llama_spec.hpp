#pragma once
#include "fsdp/param_spec.hpp"
#include "models/llama/llama_model.hpp"
#include "models/model_spec.hpp"

// The Llama family (Llama 2, Llama 3 and 3.1): its units, computation and HF
// adapter as one ModelSpec (models/model_registry.cpp lists it).
namespace wireup::train::llama {

// [embedding] [block 0] ... [block L-1] [head: final norm (+ output)]; a tied
// head borrows the embedding unit.
std::vector<UnitPlan> llama_units(const ModelConfig& m);

const ModelSpec& llama_spec();

// The Llama's skeleton, which the families built on it (models/qwen/) share:
// its units with `blocks` as each block's parameters, their initial values
// (llama_model.hpp's init_unit), and its computation with the family's block
// (BlockRecipe: its attention inputs, where its norms sit, its activation).
std::vector<UnitPlan> decoder_units(const ModelConfig& m,
                                    std::vector<ParamSpec> (*blocks)(const ModelConfig&));
at::Tensor init_decoder_unit(const UnitPlan& unit, const ModelConfig& m, std::uint64_t seed);
std::unique_ptr<ModelCompute> decoder_compute(const ModelConfig& m, const ModelOptions& o,
                                              BlockRecipe recipe);

}  // namespace wireup::train::llama
