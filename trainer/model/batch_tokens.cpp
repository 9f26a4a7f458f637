#include "model/batch_tokens.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

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

namespace wireup::train {

TokenBatches::TokenBatches(const data::BatchSourceConfig& c, std::int64_t vocab)
    : source_(c),
      vocab_(vocab),
      cols_(static_cast<std::int64_t>(c.context) + 1),
      rows_(static_cast<std::int64_t>(c.batch_size)) {}

std::optional<at::Tensor> TokenBatches::next() {
  if (!source_.synthetic()) {
    if (!source_.next(stored_)) return std::nullopt;
    return stored_tokens_to_long(stored_.data(), static_cast<std::int64_t>(stored_.rows),
                                 static_cast<std::int64_t>(stored_.cols), stored_.token_bytes);
  }
  const data::SyntheticDraw d = source_.next_synthetic();
  if (d.micro == 0) {
    auto gen = at::detail::createCPUGenerator(d.seed);
    global_ =
        at::randint(vocab_, {static_cast<std::int64_t>(d.global_rows), cols_}, gen, at::kLong);
  }
  return global_.narrow(0, static_cast<std::int64_t>(d.first_row), rows_).clone();
}

}  // namespace wireup::train
