#pragma once
#include <ATen/core/Tensor.h>

#include <functional>
#include <vector>

#include "config/float8_recipe.hpp"
#include "fsdp/param_spec.hpp"
#include "lora/lora_units.hpp"
#include "models/model_config.hpp"
#include "ops/attention.hpp"
#include "ops/rotary.hpp"

// The Llama computation, written against plain tensors (the gathered views of
// a unit), so the sharded model and the reference in the tests share one
// definition; its ops (ops/) are every model's.
namespace wireup::train::llama {

// Parameter layouts of the three unit kinds. A tied model's head holds only
// the final norm: its output projection is the embedding unit's matrix. Q, K and V sit next to each
// other in the flat buffer, and so do W1 and W3: one GEMM each (fused projections).
std::vector<ParamSpec> embedding_specs(const ModelConfig& m);
std::vector<ParamSpec> block_specs(const ModelConfig& m);
std::vector<ParamSpec> head_specs(const ModelConfig& m);

// Initial values of a unit, flat, identical on every rank and world size:
// N(0, 0.02), output projections scaled by 1/sqrt(2*layers), norms at 1,
// biases (a parameter named *.bias) at 0.
at::Tensor init_unit(const std::vector<ParamSpec>& specs, const ModelConfig& m, std::uint64_t seed);

// The rotary tables of `seq` positions for this model's frequencies
// (rope_inv_freq: theta, Llama 3.1's scaling), and the causal mask unless
// `with_causal` is false (ops/rotary.hpp).
ops::Rope make_rope(const ModelConfig& m, std::int64_t seq, bool with_causal = true);

// A micro-batch of packed conversations with document masking: each token's
// position counts from its conversation's first token and it attends only to
// its own conversation. Made once per micro-batch, on the device; a
// default-constructed one (raw text, or --document_masking 0) changes nothing.
struct Documents {
  at::Tensor positions;  // [B,T] int64
  ops::DocumentMask attend;
  bool defined() const { return positions.defined(); }
};
Documents make_documents(const at::Tensor& positions, const at::Tensor& segments,
                         at::ScalarType dtype);

// A unit's gathered tensors by name, in its specs' order (the views every
// computation of the family reads, instead of positions).
struct EmbeddingParams {
  const at::Tensor& embedding;  // [V, H]
  explicit EmbeddingParams(const std::vector<at::Tensor>& p) : embedding(p.at(0)) {}
};
struct BlockParams {
  const at::Tensor& attention_norm;  // [H]
  const at::Tensor& wqkv;            // [q_dim + 2 kv_dim, H]: Q, K, V fused
  const at::Tensor& wo;              // [H, q_dim]
  const at::Tensor& ffn_norm;        // [H]
  const at::Tensor& w13;             // [2 I, H]: gate and up fused
  const at::Tensor& w2;              // [H, I]
  // The family's own parameters, after the Llama's six (block_specs order).
  const at::Tensor& family(std::size_t i) const { return all_.at(6 + i); }
  explicit BlockParams(const std::vector<at::Tensor>& p)
      : attention_norm(p.at(0)),
        wqkv(p.at(1)),
        wo(p.at(2)),
        ffn_norm(p.at(3)),
        w13(p.at(4)),
        w2(p.at(5)),
        all_(p) {}

 private:
  const std::vector<at::Tensor>& all_;
};
struct HeadParams {
  const at::Tensor& norm;    // [H]
  const at::Tensor& output;  // [V, H]; tied: the embedding unit's matrix
  HeadParams(const at::Tensor& norm, const at::Tensor& output) : norm(norm), output(output) {}
};

at::Tensor embed(const std::vector<at::Tensor>& p, const at::Tensor& tokens);

// x W^T as a block computes it (ops::linear, float8_linear, a decoding step's
// matrix-vector product).
using Projection = std::function<at::Tensor(const at::Tensor& x, const at::Tensor& w)>;
// The attention's inputs of one block, RoPE not yet applied: q [B,T,nh,hd], k
// and v [B,T,kv,hd], from the block's parameters and its normed input. The
// Llama's: one fused QKV projection. A family that computes them otherwise
// (biases, QK-norm: models/qwen/) passes its own in its BlockRecipe.
struct QkvHeads {
  at::Tensor q, k, v;
};
using AttentionInputs = QkvHeads (*)(const BlockParams& p, const at::Tensor& normed,
                                     const ModelConfig& m, const Projection& proj);
QkvHeads llama_qkv(const BlockParams& p, const at::Tensor& normed, const ModelConfig& m,
                   const Projection& proj);

// The block's four projections as the caller computes them (training: float8
// and LoRA's adapters where set; decoding: plain products).
struct BlockProjections {
  Projection qkv, out, gate_up, down;
};
// RoPE and attention over the block's q, k and v: a training sequence's
// (causal or per document) or a decoding step's (over the KV cache). Returns
// [B, T, heads * head_dim].
using Attend =
    std::function<at::Tensor(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v)>;
// The Llama block, the one definition training, eval and KV decoding run:
// x + out(attend(inputs(norm(x)))), then h + down(swiglu(gate_up(norm(h)))).
at::Tensor decoder_block(const BlockParams& p, const at::Tensor& x, const ModelConfig& m,
                         const BlockProjections& proj, AttentionInputs inputs,
                         const Attend& attend);
// A block of a family on this skeleton: its attention inputs, and its
// computation over them (decoder_block's signature: where its norms sit, its
// activation). Training, eval and KV decoding all run it.
using BlockComputation = at::Tensor (*)(const BlockParams& p, const at::Tensor& x,
                                        const ModelConfig& m, const BlockProjections& proj,
                                        AttentionInputs inputs, const Attend& attend);
struct BlockRecipe {
  AttentionInputs inputs = llama_qkv;
  BlockComputation compute = decoder_block;
};

// `float8`: the block's four projections in float8 (float8_linear.hpp).
// `docs`: packed conversations (positions and attention per conversation).
// `recipe`: the family's block. `adapters`: LoRA's part added to each
// projection's output (before the family's QK-norm or after its bias, as PEFT
// wraps the Linear).
at::Tensor block(const std::vector<at::Tensor>& p, const at::Tensor& x, const ops::Rope& rope,
                 const ModelConfig& m, Float8Recipe float8 = Float8Recipe::Off,
                 const Documents& docs = Documents(), BlockRecipe recipe = {},
                 const lora::BlockAdapters* adapters = nullptr);
// Mean cross-entropy of the next-token logits against `targets`; p = {final
// norm, output projection} (tied: the embedding matrix). With `trained`
// (int64 flat indices into the B*T targets, document_layout.hpp's
// trained_targets): the sum of those targets' cross-entropy over
// `divisor` (> 0), only their logits computed; none: a zero with gradients.
at::Tensor head_loss(const std::vector<at::Tensor>& p, const at::Tensor& x,
                     const at::Tensor& targets, const ModelConfig& m,
                     const at::Tensor& trained = at::Tensor(), double divisor = 0);
// Pair mode: the `trained` targets' log-probs summed per completion side
// (`sides`, aligned with `trained`) into [2*pairs] doubles, and `objective`
// of them (the loss; DPO's: main/dpo_step.hpp).
at::Tensor head_pair_loss(const std::vector<at::Tensor>& p, const at::Tensor& x,
                          const at::Tensor& targets, const ModelConfig& m,
                          const at::Tensor& trained, const at::Tensor& sides, std::int64_t pairs,
                          const std::function<at::Tensor(const at::Tensor&)>& objective);

}  // namespace wireup::train::llama
