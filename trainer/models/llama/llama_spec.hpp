#pragma once
#include "models/model_spec.hpp"

// The Llama family (Llama 2, Llama 3 and 3.1): its units, computation and HF
// adapter as one ModelSpec (models/model_registry.cpp lists it).
namespace wireup::train::llama {

// [embedding] [block 0] ... [block L-1] [head: final norm (+ output)]; a tied
// head borrows the embedding unit.
std::vector<UnitPlan> llama_units(const ModelConfig& m);

const ModelSpec& llama_spec();

}  // namespace wireup::train::llama
