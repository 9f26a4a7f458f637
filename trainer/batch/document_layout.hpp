#pragma once
#include <cstdint>
#include <string>
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

// Variable-length attention's view of the inputs' segments (input_segments,
// rows x T): the rows*T tokens laid end to end, each maximal run of one
// segment within a row a sequence of its own, causal inside it. A row's
// segments are 0, 1, ... in order (data::Batch), so each run is one
// conversation (or the padding) and this is may_attend's rule; segments that
// go down within a row, or more than 2^31-1 tokens, throw
// std::invalid_argument.
struct VarlenLayout {
  std::vector<std::int32_t> cu_seqlens;  // sequences + 1 offsets: 0, ..., rows*T
  std::int32_t max_len = 0;              // the longest sequence
};
VarlenLayout varlen_layout(const std::int32_t* input_segments, std::uint64_t rows, std::uint64_t T);

// Which attention document masking runs on (the rule; attention.cpp probes
// and applies it):
// - Blocked: the blocked attention with an additive [B,T,T] mask (the CPU;
//   CUDA without LibTorch's fused attention, `sdpa_built` false);
// - SdpaMask: CUDA's scaled_dot_product_attention with a bool [B,1,T,T] mask;
// - VarlenFlash: ATen's variable-length flash attention over cu_seqlens (no
//   mask): CUDA, bf16 or fp16 (`half_dtype`), head_dim a multiple of 8 up to
//   256, a LibTorch that has it (`varlen_built`), and not forced off.
// `force` is WIREUP_DOCUMENT_ATTENTION's value: null or empty chooses as
// above, "mask" never takes VarlenFlash, anything else throws
// std::invalid_argument naming it.
enum class DocumentAttention { Blocked, SdpaMask, VarlenFlash };
struct AttentionBuild {
  bool sdpa = false;    // scaled_dot_product_attention with enable_gqa (LibTorch 2.5+)
  bool varlen = false;  // at::_flash_attention_forward with cu_seqlens (LibTorch 2.5+)
};
DocumentAttention choose_document_attention(bool cuda, AttentionBuild built, bool half_dtype,
                                            std::int64_t head_dim, const char* force);
const char* document_attention_name(DocumentAttention a);

// The targets in the loss, as flat indices i*(cols-1) + j of input position
// j of row i: token j+1 is trained (loss_mask) and shares token j's segment
// (data::Batch::target_trained). Increasing.
std::vector<std::int64_t> trained_targets(const std::uint8_t* loss_mask,
                                          const std::int32_t* segments, std::uint64_t rows,
                                          std::uint64_t cols);

// Pair mode (a preference data set: data::Batch::pairs, pairs[i] pairs in row
// i, row i's segments 2p and 2p+1 its pair p's chosen and rejected
// documents): the completion each trained target (trained_targets' order)
// belongs to, as a side of the micro-batch's pairs numbered row by row: 2q
// for pair q's chosen completion, 2q+1 for its rejected one. A trained
// target outside a row's pairs throws std::invalid_argument naming the row.
std::vector<std::int64_t> pair_sides(const std::uint8_t* loss_mask, const std::int32_t* segments,
                                     const std::uint32_t* pairs, std::uint64_t rows,
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
