#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <utility>

#include "wireup/data/batch_source.hpp"

namespace wireup::train {

// A loader batch of rows x cols tokens as stored in the shards (little-endian
// uint16 or uint32, token_bytes each) as a new int64 tensor, the ids the
// embedding and the loss take. LibTorch 1.13 has no unsigned 16/32-bit
// types: the bytes are read as int16/int32, widened, and masked back.
at::Tensor stored_tokens_to_long(const void* data, std::int64_t rows, std::int64_t cols,
                                 unsigned token_bytes);

// One micro-batch as the model takes it, on the host.
struct ModelBatch {
  ModelBatch() = default;
  explicit ModelBatch(at::Tensor ids) : tokens(std::move(ids)) {}
  at::Tensor tokens;  // [B, T+1] int64 ids
  // Packed chat rows only (undefined otherwise; document_layout.hpp):
  at::Tensor trained;           // [n] int64: flat indices i*T + j of the targets in the loss
  at::Tensor positions;         // [B, T] int64 RoPE positions (with document masking)
  at::Tensor segments;          // [B, T] int32 conversation of each input (with document masking)
  at::Tensor cu_seqlens;        // [n+1] int32: varlen_layout of `segments` (with document masking)
  std::int64_t max_seqlen = 0;  // its longest sequence
  // Pair mode (a preference data set; document_layout.hpp's pair_sides):
  // the completion side of each trained target, [n] int64 aligned with
  // `trained` (2q chosen, 2q+1 rejected of the micro-batch's pair q).
  at::Tensor sides;
  std::int64_t pair_count = 0;
  // Pair mode: the loss as a function of the sides' summed log-probs
  // ([2*pair_count] fp32, with autograd when training). The model sums its
  // trained targets' log-probs per side and returns this function's scalar.
  std::function<at::Tensor(const at::Tensor& side_logps)> side_objective;
  // The base model alone, LoRA's adapters off (DPO's reference pass).
  bool adapters_off = false;
  bool masked() const { return trained.defined(); }
  bool paired() const { return pair_count > 0; }
  // Targets in the loss: the trained ones, or all B*T.
  std::int64_t trained_count() const {
    return masked() ? trained.numel() : tokens.size(0) * (tokens.size(1) - 1);
  }
};

// A packed loader batch's masks as the model takes them: the trained targets,
// and with `document_masking` the positions and segments of the inputs.
void add_document_layout(ModelBatch& mb, const data::Batch& b, bool document_masking);

// A batch source's batches as [B, T+1] int64 ids: the loader's rows widened,
// or synthetic tokens: each optimizer step's global batch drawn uniform in
// [0, vocab) from LibTorch's CPU generator seeded as the draw says
// (data::SyntheticDraw), this rank's rows cut out of it.
class TokenBatches {
 public:
  // Packed (chat) rows come with their trained targets, and with
  // `document_masking` their positions and segments (ModelBatch).
  TokenBatches(const data::BatchSourceConfig& c, std::int64_t vocab, bool document_masking = true);
  // nullopt when the data is exhausted.
  std::optional<ModelBatch> next();
  data::BatchSource& source() { return source_; }

 private:
  data::BatchSource source_;
  std::int64_t vocab_;
  bool document_masking_;
  std::int64_t cols_;
  std::int64_t rows_;
  data::Batch stored_;
  at::Tensor global_;  // the current step's synthetic global batch
};

}  // namespace wireup::train
