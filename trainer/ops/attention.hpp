#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>

#include "batch/document_layout.hpp"

// Attention of the decoder blocks: causal over the whole row, or document-masked
// over packed conversations (model/document_layout.hpp states the rule).
namespace wireup::train::ops {

// Causal grouped-query attention: q [B,T,nh,hd], k and v [B,T,kv,hd] (RoPE
// applied) -> [B,T,nh*hd]. `causal` [T', T'] additive (0 where key <= query,
// -inf after; T' >= T) or, on CUDA with LibTorch 2.5+, undefined.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& causal);

// What packed rows' attention takes, made once per micro-batch: a query
// attends a key exactly when the key is not after it and both are in the
// same conversation (document_layout.hpp).
struct DocumentMask {
  // The mask paths: [B,T,T] additive (0 / -inf) in the compute dtype for the
  // blocked attention, or [B,1,T,T] bool (true: attend) for CUDA's
  // scaled_dot_product_attention (LibTorch 2.5+).
  at::Tensor mask;
  // The varlen flash path: varlen_layout's offsets, [n+1] int32 on the
  // device, and its longest sequence.
  at::Tensor cu_seqlens;
  std::int64_t max_len = 0;
};
// From the inputs' segments [B,T] int32 on the device: the mask paths.
DocumentMask document_mask(const at::Tensor& segments, at::ScalarType dtype);
// From varlen_layout's offsets (int32, on the device): the varlen flash path.
DocumentMask varlen_documents(const at::Tensor& cu_seqlens, std::int64_t max_len);

// The attention document masking takes on `device` for `dtype` and
// `head_dim`: choose_document_attention's rule with this build (LibTorch 2.5+
// has SDPA with grouped heads and at::_flash_attention_forward) and
// WIREUP_DOCUMENT_ATTENTION. VarlenFlash only once a tiny forward and
// backward of the kernel ran on the device (flash attention needs an Ampere
// or newer GPU and a LibTorch built with it); else SdpaMask, `note` saying
// why. Throws std::invalid_argument for a bad WIREUP_DOCUMENT_ATTENTION.
struct DocumentAttentionChoice {
  DocumentAttention path = DocumentAttention::Blocked;
  std::string note;  // why varlen flash is not used, where it could have been
};
DocumentAttentionChoice document_attention_for(at::Device device, at::ScalarType dtype,
                                               std::int64_t head_dim);

// As causal_attention, each query restricted to its own conversation.
at::Tensor document_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              const DocumentMask& docs);

}  // namespace wireup::train::ops
