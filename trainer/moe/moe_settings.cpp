#include "moe/moe_settings.hpp"

#include <algorithm>

namespace wireup::train::moe {

bool is_sparse_layer(const MoeSettings& s, std::int64_t layer) {
  if (!s.enabled() || s.sparse_step < 1) return false;
  if (std::find(s.dense_layers.begin(), s.dense_layers.end(), layer) != s.dense_layers.end())
    return false;
  return (layer + 1) % s.sparse_step == 0;
}

std::int64_t sparse_layer_count(const MoeSettings& s, std::int64_t layers) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < layers; ++i) n += is_sparse_layer(s, i) ? 1 : 0;
  return n;
}

namespace {

std::string dense_layers_problem(const MoeSettings& s, std::int64_t layers) {
  std::vector<std::int64_t> seen;
  for (const std::int64_t l : s.dense_layers) {
    if (l < 0 || l >= layers)
      return "mlp_only_layers: layer " + std::to_string(l) + " is not one of the model's " +
             std::to_string(layers) + " layers (0 to " + std::to_string(layers - 1) + ")";
    if (std::find(seen.begin(), seen.end(), l) != seen.end())
      return "mlp_only_layers: layer " + std::to_string(l) + " is listed twice";
    seen.push_back(l);
  }
  return "";
}

}  // namespace

std::string moe_settings_problem(const MoeSettings& s, std::int64_t layers,
                                 std::int64_t expert_parallel) {
  if (expert_parallel < 1)
    return "--expert_parallel " + std::to_string(expert_parallel) + ": expected 1 or more ranks";
  if (s.experts < 0) return "num_experts " + std::to_string(s.experts) + ": expected 0 or more";
  if (!s.enabled()) {
    if (expert_parallel > 1)
      return "--expert_parallel " + std::to_string(expert_parallel) +
             ": the model has no experts (num_experts 0)";
    return "";
  }
  if (s.experts_per_token < 1 || s.experts_per_token > s.experts)
    return "num_experts_per_tok " + std::to_string(s.experts_per_token) + ": expected 1 to " +
           "num_experts (" + std::to_string(s.experts) + ")";
  if (s.expert_width < 1)
    return "moe_intermediate_size " + std::to_string(s.expert_width) + ": expected 1 or more";
  if (s.sparse_step < 1)
    return "decoder_sparse_step " + std::to_string(s.sparse_step) + ": expected 1 or more";
  if (!(s.router_aux_loss_coef >= 0))
    return "router_aux_loss_coef " + std::to_string(s.router_aux_loss_coef) +
           ": expected 0 or more";
  if (std::string p = dense_layers_problem(s, layers); !p.empty()) return p;
  if (s.experts % expert_parallel != 0)
    return "--expert_parallel " + std::to_string(expert_parallel) + ": num_experts (" +
           std::to_string(s.experts) + ") is not a multiple of it";
  return "";
}

MoeLayerParams moe_layer_params(const MoeSettings& s, std::int64_t hidden) {
  const std::int64_t expert = 3 * hidden * s.expert_width;
  return {s.experts * hidden, s.experts * expert, s.experts_per_token * expert};
}

}  // namespace wireup::train::moe
