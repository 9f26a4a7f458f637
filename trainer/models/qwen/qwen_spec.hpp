#pragma once
#include "models/model_spec.hpp"

// Qwen3 (dense) and Qwen2.5 as ModelSpecs (models/model_registry.cpp lists
// them): the Llama's skeleton (models/llama/llama_spec.hpp) with each one's
// block parameters, attention inputs and Hugging Face adapter.
namespace wireup::train::qwen {

const ModelSpec& qwen3_spec();
const ModelSpec& qwen2_spec();

}  // namespace wireup::train::qwen
