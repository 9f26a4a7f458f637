#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <optional>

#include "wireup/data/batch_source.hpp"

namespace wireup::train {

// A loader batch of rows x cols tokens as stored in the shards (little-endian
// uint16 or uint32, token_bytes each) as a new int64 tensor, the ids the
// embedding and the loss take. LibTorch 1.13 has no unsigned 16/32-bit
// types: the bytes are read as int16/int32, widened, and masked back.
at::Tensor stored_tokens_to_long(const void* data, std::int64_t rows, std::int64_t cols,
                                 unsigned token_bytes);

// A batch source's batches as [B, T+1] int64 ids: the loader's rows widened,
// or synthetic tokens: each optimizer step's global batch drawn uniform in
// [0, vocab) from LibTorch's CPU generator seeded as the draw says
// (data::SyntheticDraw), this rank's rows cut out of it.
class TokenBatches {
 public:
  TokenBatches(const data::BatchSourceConfig& c, std::int64_t vocab);
  // nullopt when the data is exhausted.
  std::optional<at::Tensor> next();
  data::BatchSource& source() { return source_; }

 private:
  data::BatchSource source_;
  std::int64_t vocab_;
  std::int64_t cols_;
  std::int64_t rows_;
  data::Batch stored_;
  at::Tensor global_;  // the current step's synthetic global batch
};

}  // namespace wireup::train
