#pragma once
#include <string>
#include <vector>

#include "models/model_spec.hpp"

namespace wireup::train {

// The family a model configuration is of (ModelConfig::family; the families
// here are family_registry.hpp's family_names(), in that order).
const ModelSpec& model_spec(const ModelConfig& m);
// The family named `name`; InputError listing the known ones.
const ModelSpec& model_spec(const std::string& name);
std::vector<std::string> model_family_names();

// Adds a family to the ones model_registry.cpp lists, its ModelFamily with it
// (family_registry.hpp's register_family): for a program that links one more
// family than wireup-train, registered before main (tests/trainer/test_family/).
// Registering the same spec twice is a no-op; a clash: std::logic_error.
void register_model_spec(const ModelSpec& spec);

}  // namespace wireup::train
