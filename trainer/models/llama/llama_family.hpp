#pragma once
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "models/model_family.hpp"

// The Llama family's plain facts (Llama 2, Llama 3, 3.1 and 3.2, and the CPU-scale
// shapes of the tests and benchmarks); its computation is llama_spec.hpp.
namespace wireup::train::llama {

const ModelFamily& llama_family();

// The Llama decoder's shape, which the families built on it (models/qwen/) share:
// the parameters of a block whose attention has `extra_attention` more (biases,
// per-head norms), and a preset's fields.
std::int64_t decoder_block_params(const ModelConfig& m, std::int64_t extra_attention);
ModelConfig decoder_shape(std::int64_t context, std::int64_t vocab, std::int64_t hidden,
                          std::int64_t layers, std::int64_t heads, std::int64_t kv_heads,
                          std::int64_t intermediate, double rope_theta);
// config.json's bias and window fields, for a decoder with Q/K/V biases or not
// (`attention_bias`) whose configs may name a window they do not use
// (`names_unused_window`: use_sliding_window false beside a sliding_window).
void decoder_unsupported_hf_fields(const nlohmann::json& c, const std::string& model,
                                   bool attention_bias, bool names_unused_window,
                                   std::vector<std::string>& out);

}  // namespace wireup::train::llama
