#include "models/qwen/qwen_spec.hpp"

#include "models/llama/kv_decode.hpp"
#include "models/llama/llama_hf.hpp"
#include "models/llama/llama_spec.hpp"
#include "models/qwen/qwen_family.hpp"
#include "models/qwen/qwen_hf.hpp"
#include "models/qwen/qwen_model.hpp"

namespace wireup::train::qwen {
namespace {

std::vector<UnitPlan> qwen3_units(const ModelConfig& m) {
  return llama::decoder_units(m, qwen3_block_specs);
}
std::vector<UnitPlan> qwen2_units(const ModelConfig& m) {
  return llama::decoder_units(m, qwen2_block_specs);
}

std::unique_ptr<ModelCompute> qwen3_compute(const ModelConfig& m, const ModelOptions& o) {
  return llama::decoder_compute(m, o, {qwen3_qkv});
}
std::unique_ptr<ModelCompute> qwen2_compute(const ModelConfig& m, const ModelOptions& o) {
  return llama::decoder_compute(m, o, {qwen2_qkv});
}

std::unique_ptr<TokenDecoder> qwen3_decoder(const ModelConfig& m,
                                            std::vector<std::vector<at::Tensor>> unit_params,
                                            std::int64_t capacity) {
  return llama::skeleton_decoder(m, std::move(unit_params), capacity, {qwen3_qkv});
}
std::unique_ptr<TokenDecoder> qwen2_decoder(const ModelConfig& m,
                                            std::vector<std::vector<at::Tensor>> unit_params,
                                            std::int64_t capacity) {
  return llama::skeleton_decoder(m, std::move(unit_params), capacity, {qwen2_qkv});
}

}  // namespace

const ModelSpec& qwen3_spec() {
  static const ModelSpec spec{"qwen3",        qwen3_units,   llama::init_decoder_unit,
                              qwen3_compute,  unit_tensors,  unit_to_hf,
                              unit_from_hf,   qwen3_decoder, llama::adapter_rows,
                              &qwen3_family()};
  return spec;
}

const ModelSpec& qwen2_spec() {
  static const ModelSpec spec{"qwen2",        qwen2_units,   llama::init_decoder_unit,
                              qwen2_compute,  unit_tensors,  unit_to_hf,
                              unit_from_hf,   qwen2_decoder, llama::adapter_rows,
                              &qwen2_family()};
  return spec;
}

}  // namespace wireup::train::qwen
