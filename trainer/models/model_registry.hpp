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

}  // namespace wireup::train
