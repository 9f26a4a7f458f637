#include "model/document_layout.hpp"

#include <algorithm>

namespace wireup::train {

std::vector<std::int64_t> positions_from_segments(const std::int32_t* segments, std::uint64_t rows,
                                                  std::uint64_t cols) {
  const std::uint64_t T = cols > 0 ? cols - 1 : 0;
  std::vector<std::int64_t> out(rows * T);
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::int32_t* s = segments + i * cols;
    std::uint64_t start = 0;
    for (std::uint64_t j = 0; j < T; ++j) {
      if (j > 0 && s[j] != s[j - 1]) start = j;
      out[i * T + j] = static_cast<std::int64_t>(j - start);
    }
  }
  return out;
}

std::vector<std::int32_t> input_segments(const std::int32_t* segments, std::uint64_t rows,
                                         std::uint64_t cols) {
  const std::uint64_t T = cols > 0 ? cols - 1 : 0;
  std::vector<std::int32_t> out(rows * T);
  for (std::uint64_t i = 0; i < rows; ++i)
    std::copy(segments + i * cols, segments + i * cols + T, out.begin() + i * T);
  return out;
}

std::vector<std::int64_t> trained_targets(const std::uint8_t* loss_mask,
                                          const std::int32_t* segments, std::uint64_t rows,
                                          std::uint64_t cols) {
  const std::uint64_t T = cols > 0 ? cols - 1 : 0;
  std::vector<std::int64_t> out;
  for (std::uint64_t i = 0; i < rows; ++i)
    for (std::uint64_t j = 0; j < T; ++j) {
      const std::uint64_t t = i * cols + j + 1;
      if (loss_mask[t] != 0 && segments[t] == segments[t - 1])
        out.push_back(static_cast<std::int64_t>(i * T + j));
    }
  return out;
}

LossScaling raw_text_scaling(std::int64_t accum, std::int64_t world) {
  return {0.0, 1.0 / static_cast<double>(accum * world)};
}

LossScaling masked_scaling(std::int64_t global_trained) {
  return {static_cast<double>(std::max<std::int64_t>(global_trained, 1)), 1.0};
}

}  // namespace wireup::train
