// The mixture-of-experts settings' rules (trainer/moe/moe_settings.hpp):
// Hugging Face's sparse-layer rule, every bad setting named by its field, and
// the parameter counts against Qwen3-30B-A3B's and 235B-A22B's published
// totals (30.5B / 3.3B active; ../shared/reference/moe.md section 7).
#include <catch2/catch.hpp>

#include "moe/moe_settings.hpp"

using namespace wireup::train::moe;

namespace {

MoeSettings qwen3_30b_a3b() {
  MoeSettings s;
  s.experts = 128;
  s.experts_per_token = 8;
  s.expert_width = 768;
  s.norm_topk_prob = true;
  return s;
}

// A Qwen3 decoder's parameters outside the feed-forward: attention with
// explicit head_dim, q/k norms, the two RMSNorms; then the embedding and the
// untied head and the final norm. Written out, so the count is checked
// against the published totals rather than against itself.
struct Qwen3Shape {
  std::int64_t hidden, layers, heads, kv_heads, head_dim, vocab;
};
std::int64_t attention_and_norms(const Qwen3Shape& q) {
  const std::int64_t attn = q.hidden * q.heads * q.head_dim * 2 +    // q_proj, o_proj
                            q.hidden * q.kv_heads * q.head_dim * 2;  // k_proj, v_proj
  return attn + 2 * q.head_dim + 2 * q.hidden;
}
std::int64_t outside_layers(const Qwen3Shape& q) { return 2 * q.vocab * q.hidden + q.hidden; }

}  // namespace

TEST_CASE("sparse layers follow Hugging Face's rule", "[moe]") {
  MoeSettings s = qwen3_30b_a3b();
  CHECK(sparse_layer_count(s, 48) == 48);
  s.sparse_step = 2;  // layers 1, 3, 5: (i + 1) % 2 == 0
  CHECK_FALSE(is_sparse_layer(s, 0));
  CHECK(is_sparse_layer(s, 1));
  CHECK(sparse_layer_count(s, 6) == 3);
  s.sparse_step = 1;
  s.dense_layers = {0, 5};
  CHECK_FALSE(is_sparse_layer(s, 0));
  CHECK(is_sparse_layer(s, 1));
  CHECK_FALSE(is_sparse_layer(s, 5));
  CHECK(sparse_layer_count(s, 6) == 4);
  MoeSettings dense;
  CHECK_FALSE(dense.enabled());
  CHECK(sparse_layer_count(dense, 6) == 0);
}

TEST_CASE("bad settings are named by their field", "[moe]") {
  const auto problem = [](MoeSettings s, std::int64_t layers = 4, std::int64_t ep = 1) {
    return moe_settings_problem(s, layers, ep);
  };
  CHECK(problem(qwen3_30b_a3b()).empty());
  CHECK(problem(qwen3_30b_a3b(), 48, 8).empty());
  CHECK(problem(MoeSettings{}).empty());
  CHECK(problem(MoeSettings{}, 4, 2).find("--expert_parallel 2: the model has no experts") == 0);
  MoeSettings s = qwen3_30b_a3b();
  s.experts_per_token = 129;
  CHECK(problem(s).find("num_experts_per_tok 129: expected 1 to num_experts (128)") == 0);
  s = qwen3_30b_a3b();
  s.experts_per_token = 0;
  CHECK(problem(s).find("num_experts_per_tok 0") == 0);
  s = qwen3_30b_a3b();
  s.expert_width = 0;
  CHECK(problem(s).find("moe_intermediate_size 0") == 0);
  s = qwen3_30b_a3b();
  s.sparse_step = 0;
  CHECK(problem(s).find("decoder_sparse_step 0") == 0);
  s = qwen3_30b_a3b();
  s.router_aux_loss_coef = -0.5;
  CHECK(problem(s).find("router_aux_loss_coef") == 0);
  s = qwen3_30b_a3b();
  s.dense_layers = {4};
  CHECK(problem(s).find("mlp_only_layers: layer 4 is not one of the model's 4 layers") == 0);
  s.dense_layers = {1, 1};
  CHECK(problem(s).find("mlp_only_layers: layer 1 is listed twice") == 0);
  CHECK(problem(qwen3_30b_a3b(), 4, 3)
            .find("--expert_parallel 3: num_experts (128) is not a "
                  "multiple of it") == 0);
  CHECK(problem(qwen3_30b_a3b(), 4, 0).find("--expert_parallel 0") == 0);
}

TEST_CASE("parameter counts give Qwen3-MoE's published totals", "[moe]") {
  SECTION("30B-A3B: 30,532,122,624 in all, 3,353,032,704 per token") {
    const Qwen3Shape q{2048, 48, 32, 4, 128, 151936};
    const MoeLayerParams ffn = moe_layer_params(qwen3_30b_a3b(), q.hidden);
    CHECK(ffn.router == 262144);
    CHECK(ffn.experts == 128LL * 4718592);
    CHECK(attention_and_norms(q) == 18874368 + 4352);
    CHECK(q.layers * (attention_and_norms(q) + ffn.total()) + outside_layers(q) == 30532122624LL);
    CHECK(q.layers * (attention_and_norms(q) + ffn.active()) + outside_layers(q) == 3353032704LL);
  }
  SECTION("235B-A22B: 235,093,634,560 in all, 22,190,763,520 per token") {
    MoeSettings s = qwen3_30b_a3b();
    s.expert_width = 1536;
    const Qwen3Shape q{4096, 94, 64, 4, 128, 151936};
    const MoeLayerParams ffn = moe_layer_params(s, q.hidden);
    CHECK(q.layers * (attention_and_norms(q) + ffn.total()) + outside_layers(q) == 235093634560LL);
    CHECK(q.layers * (attention_and_norms(q) + ffn.active()) + outside_layers(q) == 22190763520LL);
  }
}
