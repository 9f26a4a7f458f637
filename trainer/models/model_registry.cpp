#include "models/model_registry.hpp"

#include "models/family_registry.hpp"
#include "models/llama/llama_spec.hpp"
#include "models/qwen/qwen_spec.hpp"
#include "wireup/error.hpp"

namespace wireup::train {
namespace {

// Every family the trainer knows: a new one is a line here (or a
// register_model_spec() call of a program that links one more).
std::vector<const ModelSpec*>& families() {
  static std::vector<const ModelSpec*> all{&llama::llama_spec(), &qwen::qwen3_spec(),
                                           &qwen::qwen2_spec()};
  return all;
}

}  // namespace

void register_model_spec(const ModelSpec& spec) {
  register_family(*spec.family);  // refuses a clash first
  for (const ModelSpec* s : families())
    if (s == &spec) return;
  families().push_back(&spec);
}

const ModelSpec& model_spec(const ModelConfig& m) { return model_spec(m.family); }

const ModelSpec& model_spec(const std::string& name) {
  std::string known;
  for (const ModelSpec* s : families()) {
    if (name == s->name) return *s;
    known += known.empty() ? s->name : std::string(", ") + s->name;
  }
  throw wireup::InputError("model family '" + name + "': expected one of " + known);
}

std::vector<std::string> model_family_names() {
  std::vector<std::string> names;
  for (const ModelSpec* s : families()) names.emplace_back(s->name);
  return names;
}

}  // namespace wireup::train
