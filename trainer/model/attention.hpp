#pragma once
#include <ATen/core/Tensor.h>

// Attention of the Llama blocks: causal over the whole row, or document-masked
// over packed conversations (model/document_layout.hpp states the rule).
namespace wireup::train::llama {

// Causal grouped-query attention: q [B,T,nh,hd], k and v [B,T,kv,hd] (RoPE
// applied) -> [B,T,nh*hd]. `causal` [T', T'] additive (0 where key <= query,
// -inf after; T' >= T) or, on CUDA with LibTorch 2.5+, undefined.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& causal);

// What packed rows' attention takes, made once per micro-batch from the
// inputs' segments [B,T] (int32): a query attends a key exactly when the key
// is not after it and both are in the same conversation.
struct DocumentMask {
  // [B,T,T] additive (0 / -inf) in the compute dtype for the blocked CPU
  // attention, or [B,1,T,T] bool (true: attend) for CUDA's
  // scaled_dot_product_attention (LibTorch 2.5+).
  at::Tensor mask;
};
DocumentMask document_mask(const at::Tensor& segments, at::ScalarType dtype);

// As causal_attention, each query restricted to its own conversation.
at::Tensor document_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              const DocumentMask& docs);

}  // namespace wireup::train::llama
