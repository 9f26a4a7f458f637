#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

#include "config/float8_recipe.hpp"
#include "config/model_config.hpp"
#include "model/attention.hpp"
#include "model/param_spec.hpp"

// The Llama computation, written against plain tensors (the gathered views of
// a unit), so the FSDP machinery and the reference model share one definition.
namespace wireup::train::llama {

// Parameter layouts of the three unit kinds. A tied model's head holds only
// the final norm: its output projection is the embedding unit's matrix. Q, K and V sit next to each
// other in the flat buffer, and so do W1 and W3: one GEMM each (fused projections).
std::vector<ParamSpec> embedding_specs(const ModelConfig& m);
std::vector<ParamSpec> block_specs(const ModelConfig& m);
std::vector<ParamSpec> head_specs(const ModelConfig& m);

// Initial values of a unit, flat, identical on every rank and world size:
// N(0, 0.02), output projections scaled by 1/sqrt(2*layers), norms at 1.
at::Tensor init_unit(const std::vector<ParamSpec>& specs, const ModelConfig& m, std::uint64_t seed);

// What depends on positions only, made once per model: rotary tables and the
// causal mask.
struct Rope {
  at::Tensor cos, sin;  // [T, head_dim/2]
  at::Tensor cis;       // cos + i sin, complex64 [T, head_dim/2] (the fp32 path)
  at::Tensor causal;    // [T, T] additive: 0 where key <= query, -inf after (or undefined)
};
// Without `with_causal` (where attention_needs_mask is false) the mask is
// left undefined: at Llama 3.1's 131072 positions it would be 64 GiB.
Rope make_rope(const ModelConfig& m, std::int64_t seq, bool with_causal = true);
bool attention_needs_mask(at::Device device);
Rope rope_to(const Rope& r, at::Device device);
// Rotary embedding of x [B,T,h,head_dim] (Meta's interleaved pairs); bf16
// computes in fp32 and rounds once. Token t of row b is at position t, or at
// positions[b][t] when given ([B,T] int64, below the table's length).
at::Tensor apply_rope(const at::Tensor& x, const Rope& rope,
                      const at::Tensor& positions = at::Tensor());

// A micro-batch of packed conversations with document masking: each token's
// position counts from its conversation's first token and it attends only to
// its own conversation. Made once per micro-batch, on the device; a
// default-constructed one (raw text, or --document_masking 0) changes nothing.
struct Documents {
  at::Tensor positions;  // [B,T] int64
  DocumentMask attend;
  bool defined() const { return positions.defined(); }
};
Documents make_documents(const at::Tensor& positions, const at::Tensor& segments,
                         at::ScalarType dtype);

// The elementwise pieces, each one autograd node with a written-out backward;
// fp32 on the CPU runs the plain-C++ kernels (*_kernel.cpp), other dtypes and
// devices ATen (rms_norm on CUDA: LibTorch's fused kernel, 2.8 or newer).
// rms_norm: x [..., n], w [n]. swiglu: silu(gate) * up of
// gate_up = [gate | up] along the last dimension. cross_entropy: the mean over
// rows of fp32 logits [N, V] against targets [N].
at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps);
// x W^T without bias: x [..., in], w [out, in]. fp32 on the CPU with oneDNN
// built in: its sgemm (cpu_gemm.hpp) forward and backward; else ATen's linear.
at::Tensor linear(const at::Tensor& x, const at::Tensor& w);
at::Tensor swiglu(const at::Tensor& gate_up);
at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets);

at::Tensor embed(const std::vector<at::Tensor>& p, const at::Tensor& tokens);
// `float8`: the block's four projections in float8 (float8_linear.hpp).
// `docs`: packed conversations (positions and attention per conversation).
at::Tensor block(const std::vector<at::Tensor>& p, const at::Tensor& x, const Rope& rope,
                 const ModelConfig& m, Float8Recipe float8 = Float8Recipe::Off,
                 const Documents& docs = Documents());
// Mean cross-entropy of the next-token logits against `targets`; p = {final
// norm, output projection} (tied: the embedding matrix). With `trained`
// (int64 flat indices into the B*T targets, document_layout.hpp's
// trained_targets): the sum of those targets' cross-entropy over
// `divisor` (> 0), only their logits computed; none: a zero with gradients.
at::Tensor head_loss(const std::vector<at::Tensor>& p, const at::Tensor& x,
                     const at::Tensor& targets, const ModelConfig& m,
                     const at::Tensor& trained = at::Tensor(), double divisor = 0);

}  // namespace wireup::train::llama
