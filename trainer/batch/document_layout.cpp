#include "batch/document_layout.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

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

VarlenLayout varlen_layout(const std::int32_t* input_segments, std::uint64_t rows,
                           std::uint64_t T) {
  if (T > 0 && rows > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()) / T)
    throw std::invalid_argument("varlen_layout: " + std::to_string(rows) + " rows of " +
                                std::to_string(T) + " tokens: more than 2^31-1 tokens");
  VarlenLayout out;
  out.cu_seqlens.push_back(0);
  std::uint64_t start = 0;  // the current run's first token, flat
  const auto close_run = [&](std::uint64_t end) {
    out.cu_seqlens.push_back(static_cast<std::int32_t>(end));
    out.max_len = std::max(out.max_len, static_cast<std::int32_t>(end - start));
    start = end;
  };
  for (std::uint64_t i = 0; i < rows; ++i) {
    const std::int32_t* s = input_segments + i * T;
    for (std::uint64_t j = 1; j < T; ++j) {
      if (s[j] < s[j - 1])
        throw std::invalid_argument("varlen_layout: row " + std::to_string(i) + "'s segment " +
                                    std::to_string(s[j]) + " at token " + std::to_string(j) +
                                    " follows segment " + std::to_string(s[j - 1]) +
                                    ": expected segments in order");
      if (s[j] != s[j - 1]) close_run(i * T + j);
    }
    if (T > 0) close_run((i + 1) * T);
  }
  return out;
}

DocumentAttention choose_document_attention(bool cuda, AttentionBuild built, bool half_dtype,
                                            std::int64_t head_dim, const char* force) {
  const std::string f = force ? force : "";
  if (!f.empty() && f != "mask")
    throw std::invalid_argument("WIREUP_DOCUMENT_ATTENTION=" + f +
                                ": expected \"mask\" (force the masked attention) or unset");
  if (!cuda || !built.sdpa) return DocumentAttention::Blocked;
  const bool head_ok = head_dim > 0 && head_dim % 8 == 0 && head_dim <= 256;
  if (f.empty() && built.varlen && half_dtype && head_ok) return DocumentAttention::VarlenFlash;
  return DocumentAttention::SdpaMask;
}

const char* document_attention_name(DocumentAttention a) {
  switch (a) {
    case DocumentAttention::Blocked:
      return "blocked_mask";
    case DocumentAttention::SdpaMask:
      return "sdpa_mask";
    case DocumentAttention::VarlenFlash:
      return "varlen_flash";
  }
  return "?";
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

std::vector<std::int64_t> pair_sides(const std::uint8_t* loss_mask, const std::int32_t* segments,
                                     const std::uint32_t* pairs, std::uint64_t rows,
                                     std::uint64_t cols) {
  const std::uint64_t T = cols > 0 ? cols - 1 : 0;
  std::vector<std::int64_t> out;
  std::int64_t first_pair = 0;  // the micro-batch's number of row i's pair 0
  for (std::uint64_t i = 0; i < rows; ++i) {
    for (std::uint64_t j = 0; j < T; ++j) {
      const std::uint64_t t = i * cols + j + 1;
      if (loss_mask[t] == 0 || segments[t] != segments[t - 1]) continue;
      if (segments[t] < 0 || static_cast<std::uint64_t>(segments[t]) >= 2ULL * pairs[i])
        throw std::invalid_argument(
            "pair_sides: row " + std::to_string(i) + " has a trained token in segment " +
            std::to_string(segments[t]) + ", outside its " + std::to_string(pairs[i]) + " pair(s)");
      out.push_back(2 * first_pair + segments[t]);
    }
    first_pair += pairs[i];
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
