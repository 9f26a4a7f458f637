#include "model/batch_tokens.hpp"

#include <ATen/ATen.h>

#include <stdexcept>
#include <string>

namespace wireup::train {

at::Tensor stored_tokens_to_long(const void* data, std::int64_t rows, std::int64_t cols,
                                 unsigned token_bytes) {
  if (token_bytes != 2 && token_bytes != 4)
    throw std::invalid_argument("stored tokens of " + std::to_string(token_bytes) +
                                " bytes: expected 2 or 4");
  const bool narrow = token_bytes == 2;
  const at::Tensor stored =
      at::from_blob(const_cast<void*>(data), {rows, cols}, narrow ? at::kShort : at::kInt);
  at::Tensor tokens = stored.to(at::kLong);  // a copy: the loader reuses its buffer
  tokens.bitwise_and_(narrow ? std::int64_t{0xFFFF} : std::int64_t{0xFFFFFFFF});
  return tokens;
}

}  // namespace wireup::train
