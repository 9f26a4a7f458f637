// A model family that exists only in this folder: the proof that a family is
// one folder plus one registration (docs/trainer-models.md, "Adding a
// family"). Its block is not the Llama's: the norms sit after each sublayer,
// on its output before the residual add (as OLMo 2 places them), and the
// feed-forward gates with tanh-approximated GELU instead of SiLU (GeGLU). It
// reuses the Llama skeleton's units, initial values and Hugging Face adapter,
// its norms renamed after where they sit.
//
// Linked with wireup-train's objects (wireup_train_program) into
// wireup-train-postnorm; the registration below runs before main.
#include <ATen/ATen.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/llama/kv_decode.hpp"
#include "models/llama/llama_family.hpp"
#include "models/llama/llama_hf.hpp"
#include "models/llama/llama_model.hpp"
#include "models/llama/llama_spec.hpp"
#include "models/model_registry.hpp"
#include "ops/fused_ops.hpp"

namespace wireup::train::postnorm {
namespace {

// x + norm(attention(x)), then h + norm(down(gelu_tanh(gate(h)) * up(h))).
// block_specs' attention_norm and ffn_norm are the two post-sublayer norms.
at::Tensor postnorm_block(const llama::BlockParams& p, const at::Tensor& x, const ModelConfig& m,
                          const llama::BlockProjections& proj, llama::AttentionInputs inputs,
                          const llama::Attend& attend) {
  const auto [q, k, v] = inputs(p, x, m, proj.qkv);
  const at::Tensor h =
      x + ops::rms_norm(proj.out(attend(q, k, v), p.wo), p.attention_norm, m.norm_eps);
  const std::vector<at::Tensor> gate_up = proj.gate_up(h, p.w13).chunk(2, -1);
  const at::Tensor act = at::gelu(gate_up[0], "tanh") * gate_up[1];
  return h + ops::rms_norm(proj.down(act, p.w2), p.ffn_norm, m.norm_eps);
}

constexpr llama::BlockRecipe kRecipe{llama::llama_qkv, postnorm_block};

std::int64_t block_params(const ModelConfig& m) { return llama::decoder_block_params(m, 0); }

void write_fields(const ModelConfig& /*m*/, nlohmann::json& c) {
  c["attention_bias"] = false;
  c["mlp_bias"] = false;
}

void unsupported_fields(const nlohmann::json& c, const std::string& model,
                        std::vector<std::string>& out) {
  llama::decoder_unsupported_hf_fields(c, model, false, false, out);
}

const ModelFamily& postnorm_family() {
  // context, vocab, hidden, layers, heads, kv_heads, intermediate, rope_theta
  static const ModelFamily family{
      "postnorm",
      "Post-norm (test)",
      {{"postnorm-tiny", llama::decoder_shape(64, 512, 64, 2, 4, 2, 176, 10000.0)}},
      /*free_head_dim=*/false,
      block_params,
      {lora::kAllTargets.begin(), lora::kAllTargets.end()},
      "wireup_postnorm",
      "WireupPostNormForCausalLM",
      "gelu_pytorch_tanh",
      write_fields,
      unsupported_fields,
  };
  return family;
}

// The Llama's HF names, the norms named after where they sit (OLMo 2's names).
std::vector<HfTensor> hf_tensors(const ModelConfig& m, std::size_t unit) {
  std::vector<HfTensor> tensors = llama::unit_tensors(m, unit);
  for (HfTensor& t : tensors)
    for (const auto& [from, to] : {std::pair<std::string, std::string>{
                                       "post_attention_layernorm", "post_feedforward_layernorm"},
                                   {"input_layernorm", "post_attention_layernorm"}})
      if (const auto at = t.name.find(from); at != std::string::npos) {
        t.name.replace(at, from.size(), to);
        break;
      }
  return tensors;
}

std::vector<UnitPlan> units(const ModelConfig& m) {
  return llama::decoder_units(m, llama::block_specs);
}

std::unique_ptr<ModelCompute> compute(const ModelConfig& m, const ModelOptions& o) {
  return llama::decoder_compute(m, o, kRecipe);
}

std::unique_ptr<TokenDecoder> decoder(const ModelConfig& m,
                                      std::vector<std::vector<at::Tensor>> unit_params,
                                      std::int64_t capacity) {
  return llama::skeleton_decoder(m, std::move(unit_params), capacity, kRecipe);
}

const ModelSpec& postnorm_spec() {
  static const ModelSpec spec{"postnorm",
                              units,
                              llama::init_decoder_unit,
                              compute,
                              hf_tensors,
                              llama::unit_to_hf,
                              llama::unit_from_hf,
                              decoder,
                              llama::adapter_rows,
                              &postnorm_family()};
  return spec;
}

// The one registration: before main, as the program starts.
[[maybe_unused]] const bool registered = (register_model_spec(postnorm_spec()), true);

}  // namespace
}  // namespace wireup::train::postnorm
