#pragma once
#include <cstdint>
#include <string>
#include <vector>

// A mixture-of-experts decoder's routing settings, as Hugging Face's
// Qwen3MoeConfig names them, and the rules that follow from them alone: which
// layers are sparse, what is wrong with a setting, how many parameters an MoE
// layer holds and how many one token uses. Plain C++ (no LibTorch), so it is
// built and unit-tested everywhere. docs/moe.md.
namespace wireup::train::moe {

struct MoeSettings {
  std::int64_t experts = 0;            // num_experts (E); 0: every layer dense
  std::int64_t experts_per_token = 0;  // num_experts_per_tok (k)
  std::int64_t expert_width = 0;       // moe_intermediate_size: each expert's SwiGLU width
  bool norm_topk_prob = false;         // the k weights divided by their sum (HF's default: false)
  std::int64_t sparse_step = 1;        // decoder_sparse_step
  std::vector<std::int64_t> dense_layers;  // mlp_only_layers
  double router_aux_loss_coef = 0.001;     // the load-balancing loss's weight

  bool enabled() const { return experts > 0; }
};

// Hugging Face's rule: layer i (from 0) is sparse when it is not in
// mlp_only_layers, there are experts, and (i + 1) % decoder_sparse_step == 0.
bool is_sparse_layer(const MoeSettings& s, std::int64_t layer);
// How many of `layers` layers are sparse.
std::int64_t sparse_layer_count(const MoeSettings& s, std::int64_t layers);

// What is wrong with the settings for a model of `layers` layers split over
// `expert_parallel` ranks, naming the config.json field (or --expert_parallel);
// "" when they are usable. Disabled settings are always usable.
std::string moe_settings_problem(const MoeSettings& s, std::int64_t layers,
                                 std::int64_t expert_parallel);

// One sparse layer's feed-forward parameters for hidden width `hidden`: the
// router (E x hidden, no bias) and the experts (three bias-free projections of
// hidden x expert_width each). `active` counts the k experts one token uses.
struct MoeLayerParams {
  std::int64_t router = 0;
  std::int64_t experts = 0;         // all E
  std::int64_t active_experts = 0;  // the k a token reaches
  std::int64_t total() const { return router + experts; }
  std::int64_t active() const { return router + active_experts; }
};
MoeLayerParams moe_layer_params(const MoeSettings& s, std::int64_t hidden);

}  // namespace wireup::train::moe
