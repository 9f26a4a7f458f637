#include "batch/batch_tokens.hpp"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "batch/document_layout.hpp"

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

namespace {

template <typename T>
at::Tensor host_tensor(const std::vector<T>& v, std::int64_t rows, at::ScalarType type) {
  return at::from_blob(const_cast<T*>(v.data()), {rows, static_cast<std::int64_t>(v.size()) / rows},
                       type)
      .clone();
}

}  // namespace

void add_document_layout(ModelBatch& mb, const data::Batch& b, bool document_masking) {
  const auto rows = static_cast<std::int64_t>(b.rows);
  const auto trained = trained_targets(b.loss_mask.data(), b.segments.data(), b.rows, b.cols);
  mb.trained = trained.empty() ? at::empty({0}, at::kLong)
                               : host_tensor(trained, 1, at::kLong).reshape({-1});
  if (b.paired()) {
    const auto sides =
        pair_sides(b.loss_mask.data(), b.segments.data(), b.pairs.data(), b.rows, b.cols);
    mb.sides =
        sides.empty() ? at::empty({0}, at::kLong) : host_tensor(sides, 1, at::kLong).reshape({-1});
    for (const std::uint32_t p : b.pairs) mb.pair_count += p;
  }
  if (!document_masking) return;
  mb.positions =
      host_tensor(positions_from_segments(b.segments.data(), b.rows, b.cols), rows, at::kLong);
  const auto segments = input_segments(b.segments.data(), b.rows, b.cols);
  mb.segments = host_tensor(segments, rows, at::kInt);
  const VarlenLayout v = varlen_layout(segments.data(), b.rows, b.cols > 0 ? b.cols - 1 : 0);
  mb.cu_seqlens = host_tensor(v.cu_seqlens, 1, at::kInt).reshape({-1});
  mb.max_seqlen = v.max_len;
}

TokenBatches::TokenBatches(const data::BatchSourceConfig& c, std::int64_t vocab,
                           bool document_masking)
    : source_(c),
      vocab_(vocab),
      document_masking_(document_masking),
      cols_(static_cast<std::int64_t>(c.context) + 1),
      rows_(static_cast<std::int64_t>(c.batch_size)) {}

std::optional<ModelBatch> TokenBatches::next() {
  if (!source_.synthetic()) {
    if (!source_.next(stored_)) return std::nullopt;
    ModelBatch mb{stored_tokens_to_long(stored_.data(), static_cast<std::int64_t>(stored_.rows),
                                        static_cast<std::int64_t>(stored_.cols),
                                        stored_.token_bytes)};
    if (stored_.packed()) add_document_layout(mb, stored_, document_masking_);
    return mb;
  }
  const data::SyntheticDraw d = source_.next_synthetic();
  if (d.micro == 0) {
    auto gen = at::detail::createCPUGenerator(d.seed);
    global_ =
        at::randint(vocab_, {static_cast<std::int64_t>(d.global_rows), cols_}, gen, at::kLong);
  }
  return ModelBatch{global_.narrow(0, static_cast<std::int64_t>(d.first_row), rows_).clone()};
}

}  // namespace wireup::train
