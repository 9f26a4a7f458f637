// Qwen3 and Qwen2.5 as ModelSpecs (models/qwen/): the registry's families
// against the configuration's, the presets' parameter counts against the
// published models', the HF adapter covering every parameter once and
// putting the per-head norms and Q/K biases in HF's rotary order, and the
// KV-cache decoder computing the same function as the training forward
// (so generate uses the family's attention, QK-norm and biases included).
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "models/model_registry.hpp"
#include "ops/fused_ops.hpp"

using namespace wireup::train;

namespace {

std::int64_t numel(const std::vector<UnitPlan>& units) {
  std::int64_t n = 0;
  for (const auto& u : units)
    for (const auto& s : u.specs) n += s.numel();
  return n;
}

// Every unit's parameters, random: norms and biases far from their initial
// values, Q and K large (sharp attention).
std::vector<std::vector<at::Tensor>> random_units(const std::vector<UnitPlan>& units) {
  std::vector<std::vector<at::Tensor>> out;
  for (const auto& u : units) {
    std::vector<at::Tensor> p;
    for (const auto& s : u.specs)
      p.push_back(s.shape.size() == 1 ? 1 + 0.5 * at::randn(s.shape) : 0.3 * at::randn(s.shape));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

TEST_CASE("the registry's families are the configuration's, each preset names its own") {
  CHECK(model_family_names() == family_names());
  // Each computation is tied to its family's facts, by the same name.
  for (const auto& name : family_names()) {
    CHECK(model_spec(name).family == &model_family(name));
    CHECK(std::string(model_spec(name).name) == name);
  }
  // Every preset's family is the one whose folder lists it.
  for (const auto& name : preset_names()) {
    const ModelConfig m = preset(name);
    CAPTURE(name);
    const auto& listed = model_family(m).presets;
    CHECK(
        std::any_of(listed.begin(), listed.end(), [&](const auto& p) { return p.first == name; }));
  }
  CHECK(std::string(model_spec(preset("qwen3-tiny")).name) == "qwen3");
  CHECK(std::string(model_spec(preset("qwen3-8b")).name) == "qwen3");
  CHECK(std::string(model_spec(preset("qwen2.5-7b")).name) == "qwen2");
  CHECK(std::string(model_spec(preset("llama3-8b")).name) == "llama");
  CHECK(family_of_hf_model_type("qwen3") == &model_family("qwen3"));
  CHECK(family_of_hf_model_type("qwen3_moe") == nullptr);
  CHECK_THROWS_WITH(model_family("gpt2"),
                    "model family 'gpt2': expected one of llama, qwen3, qwen2");
}

TEST_CASE("Qwen presets have the published models' parameter counts, in their units") {
  // Qwen3-0.6B: 0.6B with the tied embedding, 0.44B without; Qwen2.5-0.5B.
  CHECK(total_params(preset("qwen3-0.6b")) == 596049920);
  CHECK(total_params(preset("qwen3-0.6b")) - embedding_params(preset("qwen3-0.6b")) == 440467456);
  CHECK(total_params(preset("qwen2.5-0.5b")) == 494032768);
  // The rest as docs/trainer-options.md's table lists them (the published
  // sizes, rounded: 1.7B, 4.0B, 8.2B, 14.8B, 32.8B; 1.54B, 3.09B, 7.61B).
  const std::pair<const char*, std::int64_t> sizes[] = {
      {"qwen3-1.7b", 1720574976}, {"qwen3-4b", 4022468096},   {"qwen3-8b", 8190735360},
      {"qwen3-14b", 14768307200}, {"qwen3-32b", 32762123264}, {"qwen2.5-1.5b", 1543714304},
      {"qwen2.5-3b", 3085938688}, {"qwen2.5-7b", 7615616512}};
  for (const auto& [name, count] : sizes) {
    INFO(name);
    CHECK(total_params(preset(name)) == count);
  }
  for (const char* name : {"qwen3-tiny", "qwen2.5-tiny", "qwen3-0.6b", "qwen3-8b", "qwen2.5-7b"}) {
    const ModelConfig m = preset(name);
    INFO(name);
    check_model_config(m);
    CHECK(numel(model_spec(m).units(m)) == total_params(m));
  }
  ModelConfig m = preset("qwen3-0.6b");
  CHECK(m.head_dim() == 128);
  CHECK(m.q_dim() == 2048);  // wider than hidden_size 1024
  m.family = "llama";        // a Llama's heads are hidden / heads wide
  CHECK_THROWS_WITH(check_model_config(m), Catch::Contains("--head_dim 128"));
}

TEST_CASE("the Qwen HF adapter names every parameter once and orders norms and biases as HF") {
  for (const char* name : {"qwen3-tiny", "qwen2.5-tiny"}) {
    const ModelConfig m = preset(name);
    const ModelSpec& spec = model_spec(m);
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
      // To HF and back: the same buffer.
      const at::Tensor flat = at::randn({ours});
      const auto tensors = spec.unit_to_hf(m, u, flat);
      at::Tensor back = at::zeros({ours});
      spec.unit_from_hf(m, u, back,
                        [&](std::size_t i, at::Tensor& slot) { slot.copy_(tensors[i]); });
      CHECK(at::equal(back, flat));
    }
    INFO(name);
    CHECK(names.count("model.layers.1.self_attn.q_norm.weight") == (m.family == "qwen3" ? 1u : 0u));
    CHECK(names.count("model.layers.1.self_attn.v_proj.bias") == (m.family == "qwen2" ? 1u : 0u));
  }
  // A head's elements in rotary pairs (0,1), (2,3), ... -> HF's halves: 0, 2, ..., 1, 3, ...
  const ModelConfig m = preset("qwen3-tiny");
  const auto specs = model_spec(m).units(m)[1].specs;
  std::int64_t off = 0;
  for (std::size_t i = 0; i + 2 < specs.size(); ++i) off += specs[i].numel();
  at::Tensor flat = at::zeros({off + 2 * m.head_dim()});
  flat.narrow(0, off, m.head_dim()).copy_(at::arange(m.head_dim(), at::kFloat));
  const at::Tensor q_norm = model_spec(m).unit_to_hf(m, 1, flat)[9];
  CHECK(q_norm[0].item<float>() == 0);
  CHECK(q_norm[1].item<float>() == 2);
  CHECK(q_norm[m.head_dim() / 2].item<float>() == 1);
}

TEST_CASE("the Qwen decoder computes the training forward's function") {
  at::NoGradGuard no_grad;
  for (const char* name : {"qwen3-tiny", "qwen2.5-tiny"}) {
    ModelConfig m = preset(name);
    m.tied = false;
    const ModelSpec& spec = model_spec(m);
    at::manual_seed(5);
    const auto params = random_units(spec.units(m));
    const at::Tensor tokens = at::randint(m.vocab, {1, 17}, at::kLong);
    // The training forward's loss, unit by unit.
    const auto compute = spec.compute(m, ModelOptions{});  // the step's computation refers to it
    auto step = compute->prepare(ModelBatch(tokens), 1.0);
    at::Tensor x = step.input;
    for (std::size_t u = 0; u < params.size(); ++u) x = step.compute(u, params[u], x);
    // The decoder's logits, the prompt fed in two pieces.
    auto decoder = spec.decoder(m, params, 16);
    const at::Tensor a = decoder->feed(tokens[0].narrow(0, 0, 9), true);
    const at::Tensor b = decoder->feed(tokens[0].narrow(0, 9, 7), true);
    const at::Tensor logits = at::cat({a, b});
    const at::Tensor loss = at::cross_entropy_loss(logits, tokens[0].narrow(0, 1, 16));
    INFO(name << ": training " << x.item<double>() << ", decoder " << loss.item<double>());
    CHECK(std::abs(x.item<double>() - loss.item<double>()) < 1e-5 * loss.item<double>());
  }
}
