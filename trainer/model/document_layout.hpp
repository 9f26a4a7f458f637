#pragma once
#include <cstdint>
#include <vector>

// Packed chat rows (data/loader: tokens, loss_mask and segments, rows x cols
// with cols = T+1) as the model takes them, in plain C++: RoPE positions that
// restart with each conversation, which keys a query may attend, which
// targets enter the loss, and how the loss of a step is normalised.
namespace wireup::train {

// The RoPE position of input token j (j < cols-1) of each row: j minus the
// first column of its segment in that row. rows x (cols-1), row-major.
std::vector<std::int64_t> positions_from_segments(const std::int32_t* segments, std::uint64_t rows,
                                                  std::uint64_t cols);

// The inputs' segments (the first cols-1 tokens of each row), rows x (cols-1).
std::vector<std::int32_t> input_segments(const std::int32_t* segments, std::uint64_t rows,
                                         std::uint64_t cols);

// Document masking: query token q of a row attends key token k exactly when
// k <= q and both belong to the same conversation (segment).
inline bool may_attend(const std::int32_t* row_segments, std::int64_t q, std::int64_t k) {
  return k <= q && row_segments[q] == row_segments[k];
}

// The targets in the loss, as flat indices i*(cols-1) + j of input position
// j of row i: token j+1 is trained (loss_mask) and shares token j's segment
// (data::Batch::target_trained). Increasing.
std::vector<std::int64_t> trained_targets(const std::uint8_t* loss_mask,
                                          const std::int32_t* segments, std::uint64_t rows,
                                          std::uint64_t cols);

// How an optimizer step's micro-batch losses are scaled. The gradient
// collectives sum over ranks and each rank adds its micro-steps, so:
// - raw text (every target trained, the same count in every micro-batch):
//   each micro-batch's loss is its mean (loss_divisor 0), the gradient scaled
//   by 1/(accum*world);
// - masked (chat): each micro-batch's loss is the sum of its trained targets'
//   cross-entropy over the step's global trained count (all ranks, all
//   micro-steps; at least 1), gradient scale 1; their sum over ranks and
//   micro-steps is the mean over every trained target of the global batch,
//   whatever the world size and the accumulation split.
struct LossScaling {
  double loss_divisor = 0;  // 0: the micro-batch's mean
  double grad_scale = 1;
};
LossScaling raw_text_scaling(std::int64_t accum, std::int64_t world);
LossScaling masked_scaling(std::int64_t global_trained);

}  // namespace wireup::train
