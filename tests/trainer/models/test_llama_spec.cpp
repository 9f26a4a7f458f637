// The Llama as a ModelSpec (models/llama/llama_spec.cpp) and the registry:
// the units the sharding engine is handed, their parameter count against the
// one count the trainer reports (total_params), the tied head borrowing the
// embedding, and the HF adapter covering every parameter once.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "models/family_registry.hpp"
#include "models/llama/llama_spec.hpp"
#include "models/model_config.hpp"
#include "models/model_registry.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;

namespace {

std::int64_t numel(const std::vector<UnitPlan>& units) {
  std::int64_t n = 0;
  for (const auto& u : units)
    for (const auto& s : u.specs) n += s.numel();
  return n;
}

}  // namespace

TEST_CASE("the Llama's units hold exactly total_params parameters") {
  for (const char* name : {"tiny", "llama2-7b", "llama3-8b", "llama3.2-1b"}) {
    for (const bool tied : {false, true}) {
      ModelConfig m = preset(name);
      m.tied = tied;
      const auto units = llama::llama_units(m);
      INFO(name << (tied ? " tied" : " untied"));
      REQUIRE(units.size() == static_cast<std::size_t>(m.layers) + 2);
      CHECK(numel(units) == total_params(m));
      CHECK(units.front().name == "embedding");
      CHECK_FALSE(units.front().backward_reads_params);
      CHECK_FALSE(units.front().recompute);
      CHECK(units[1].recompute);
      CHECK(units.back().name == "head");
      CHECK_FALSE(units.back().recompute);
      CHECK(units.back().borrows == (tied ? 0 : -1));
    }
  }
}

TEST_CASE("the Llama's HF adapter names every parameter once, with the units' sizes") {
  ModelConfig m = preset("tiny");
  for (const bool tied : {false, true}) {
    m.tied = tied;
    const ModelSpec& spec = llama::llama_spec();
    const auto units = spec.units(m);
    std::set<std::string> names;
    for (std::size_t u = 0; u < units.size(); ++u) {
      std::int64_t hf = 0, ours = 0;
      for (const auto& t : spec.hf_tensors(m, u)) {
        CHECK(names.insert(t.name).second);
        std::int64_t n = 1;
        for (auto d : t.shape) n *= d;
        hf += n;
      }
      for (const auto& s : units[u].specs) ours += s.numel();
      CHECK(hf == ours);
    }
    CHECK(names.count("lm_head.weight") == (tied ? 0u : 1u));
  }
}

TEST_CASE("the registry knows the Llama and names the known families for another") {
  CHECK(std::string(model_spec("llama").name) == "llama");
  CHECK(&model_spec(preset("tiny")) == &llama::llama_spec());
  CHECK(model_family_names() == std::vector<std::string>{"llama", "qwen3", "qwen2"});
  CHECK_THROWS_WITH(model_spec("gpt2"), "model family 'gpt2': expected one of llama, qwen3, qwen2");
  CHECK_THROWS_AS(model_spec("gpt2"), wireup::InputError);
}
