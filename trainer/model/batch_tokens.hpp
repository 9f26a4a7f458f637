#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace wireup::train {

// A loader batch of rows x cols tokens as stored in the shards (little-endian
// uint16 or uint32, token_bytes each) as a new int64 tensor, the ids the
// embedding and the loss take. LibTorch 1.13 has no unsigned 16/32-bit
// types: the bytes are read as int16/int32, widened, and masked back.
at::Tensor stored_tokens_to_long(const void* data, std::int64_t rows, std::int64_t cols,
                                 unsigned token_bytes);

}  // namespace wireup::train
