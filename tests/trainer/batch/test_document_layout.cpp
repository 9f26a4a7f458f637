// Packed chat rows in plain C++ (model/document_layout.hpp): positions that
// restart per conversation, the attention rule, the trained targets (against
// data::Batch::target_trained's rule written out), the loss normalisation, the
// variable-length (cu_seqlens) layout and which attention runs document masking.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "batch/document_layout.hpp"

using namespace wireup::train;

namespace {

// Two rows of cols = 9 (T = 8): row 0 holds conversations 0 (3 tokens), 1 (4)
// and padding (segment 2, 2 tokens); row 1 one conversation of 9 tokens.
const std::vector<std::int32_t> kSegments = {0, 0, 0, 1, 1, 1, 1, 2, 2,  //
                                             0, 0, 0, 0, 0, 0, 0, 0, 0};
const std::vector<std::uint8_t> kMask = {0, 1, 1, 1, 0, 1, 1, 0, 0,  //
                                         0, 0, 1, 1, 0, 1, 1, 1, 1};

}  // namespace

TEST_CASE("positions restart at 0 with each conversation of a row") {
  const auto p = positions_from_segments(kSegments.data(), 2, 9);
  CHECK(p == std::vector<std::int64_t>{0, 1, 2, 0, 1, 2, 3, 0,  //
                                       0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(input_segments(kSegments.data(), 2, 9) ==
        std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0});
  CHECK(positions_from_segments(kSegments.data(), 0, 9).empty());
}

TEST_CASE("a query attends earlier keys of its own conversation only") {
  const std::int32_t* row = kSegments.data();
  CHECK(may_attend(row, 2, 0));
  CHECK(may_attend(row, 2, 2));
  CHECK_FALSE(may_attend(row, 2, 3));  // later
  CHECK_FALSE(may_attend(row, 3, 2));  // conversation 0 from conversation 1
  CHECK(may_attend(row, 6, 3));
  CHECK_FALSE(may_attend(row, 7, 6));  // padding sees only padding
  CHECK(may_attend(row, 8, 7));
  int visible = 0;
  for (int q = 0; q < 9; ++q)
    for (int k = 0; k < 9; ++k) visible += may_attend(row, q, k);
  CHECK(visible == 6 + 10 + 3);  // triangles of 3, 4 and 2 tokens
}

TEST_CASE("trained targets: the next token trained and in the same conversation") {
  const auto t = trained_targets(kMask.data(), kSegments.data(), 2, 9);
  // row 0: targets 1, 2 (tokens 1, 2); token 3 is trained but starts
  // conversation 1 (not a target of token 2); tokens 5, 6. Row 1 (offset 8):
  // tokens 2, 3, 5, 6, 7, 8 -> input positions 1, 2, 4, 5, 6, 7.
  CHECK(t == std::vector<std::int64_t>{0, 1, 4, 5, 9, 10, 12, 13, 14, 15});
  std::vector<std::int64_t> rule;
  for (std::uint64_t i = 0; i < 2; ++i)
    for (std::uint64_t j = 0; j < 8; ++j) {
      const auto k = i * 9 + j + 1;
      if (kMask[k] && kSegments[k] == kSegments[k - 1])
        rule.push_back(static_cast<std::int64_t>(i * 8 + j));
    }
  CHECK(t == rule);
  const std::vector<std::uint8_t> none(18, 0);
  CHECK(trained_targets(none.data(), kSegments.data(), 2, 9).empty());
}

TEST_CASE("the loss normalisation gives the global mean at any split") {
  // Raw text: means of micro-batches, summed over 4 micro-steps x 2 ranks.
  const LossScaling raw = raw_text_scaling(4, 2);
  CHECK(raw.loss_divisor == 0);
  CHECK(raw.grad_scale == Approx(1.0 / 8));
  // Masked: per-target losses l_k split unevenly over ranks and micro-steps;
  // each micro-batch's sum over the global count, added up, is the mean.
  const std::vector<std::vector<double>> parts = {{1.0, 2.0, 3.0}, {4.0}, {}, {5.0, 6.0}};
  std::int64_t count = 0;
  double total = 0;
  for (const auto& p : parts)
    for (double l : p) ++count, total += l;
  const LossScaling m = masked_scaling(count);
  CHECK(m.grad_scale == 1.0);
  double summed = 0;
  for (const auto& p : parts) {
    double s = 0;
    for (double l : p) s += l;
    summed += s / m.loss_divisor;
  }
  CHECK(summed == Approx(total / static_cast<double>(count)));
  CHECK(masked_scaling(0).loss_divisor == 1.0);  // no trained target: loss 0, not NaN
}

TEST_CASE("varlen layout: each run of a segment within a row is one sequence") {
  const auto in = input_segments(kSegments.data(), 2, 9);  // rows of T = 8
  const VarlenLayout v = varlen_layout(in.data(), 2, 8);
  // row 0: conversation 0 (3), 1 (4), padding (1); row 1: one of 8
  CHECK(v.cu_seqlens == std::vector<std::int32_t>{0, 3, 7, 8, 16});
  CHECK(v.max_len == 8);
  // The same rule as may_attend: q attends k (flat) exactly when both lie in
  // one sequence and k <= q.
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t q = 0; q < 8; ++q)
      for (std::int64_t k = 0; k < 8; ++k) {
        const auto fq = i * 8 + q, fk = i * 8 + k;
        std::size_t s = 0;
        while (v.cu_seqlens[s + 1] <= fq) ++s;
        const bool same = fk >= v.cu_seqlens[s] && fk < v.cu_seqlens[s + 1];
        CHECK((same && k <= q) == may_attend(in.data() + i * 8, q, k));
      }
  // Equal segment ids in two rows are two sequences.
  const std::vector<std::int32_t> twice = {0, 0, 0, 0, 0, 0};
  CHECK(varlen_layout(twice.data(), 2, 3).cu_seqlens == std::vector<std::int32_t>{0, 3, 6});
  CHECK(varlen_layout(twice.data(), 0, 3).cu_seqlens == std::vector<std::int32_t>{0});
}

TEST_CASE("varlen layout refuses segments out of order and more than 2^31-1 tokens") {
  const std::vector<std::int32_t> back = {0, 1, 0};
  CHECK_THROWS_WITH(varlen_layout(back.data(), 1, 3),
                    Catch::Contains("segment 0 at token 2 follows segment 1"));
  CHECK_THROWS_WITH(varlen_layout(back.data(), std::uint64_t{1} << 20, std::uint64_t{1} << 12),
                    Catch::Contains("more than 2^31-1 tokens"));
}

TEST_CASE("document attention: varlen flash only for half precision on CUDA with a fit head") {
  const AttentionBuild none{}, sdpa{true, false}, both{true, true};
  using A = DocumentAttention;
  CHECK(choose_document_attention(false, both, true, 64, nullptr) == A::Blocked);
  CHECK(choose_document_attention(true, none, true, 64, nullptr) == A::Blocked);
  CHECK(choose_document_attention(true, sdpa, true, 64, nullptr) == A::SdpaMask);
  CHECK(choose_document_attention(true, both, true, 64, nullptr) == A::VarlenFlash);
  CHECK(choose_document_attention(true, both, true, 256, "") == A::VarlenFlash);
  CHECK(choose_document_attention(true, both, false, 64, nullptr) == A::SdpaMask);  // fp32
  CHECK(choose_document_attention(true, both, true, 260, nullptr) == A::SdpaMask);
  CHECK(choose_document_attention(true, both, true, 12, nullptr) == A::SdpaMask);
  CHECK(choose_document_attention(true, both, true, 64, "mask") == A::SdpaMask);
  CHECK(choose_document_attention(false, both, false, 64, "mask") == A::Blocked);
  CHECK_THROWS_WITH(choose_document_attention(true, both, true, 64, "flash"),
                    Catch::Contains("WIREUP_DOCUMENT_ATTENTION=flash"));
  CHECK(std::string(document_attention_name(A::VarlenFlash)) == "varlen_flash");
  CHECK(std::string(document_attention_name(A::SdpaMask)) == "sdpa_mask");
  CHECK(std::string(document_attention_name(A::Blocked)) == "blocked_mask");
}

TEST_CASE("pair mode: each trained target's side, pairs numbered row by row") {
  // Row 0 holds one pair (chosen: segment 0, rejected: 1) and padding (2);
  // row 1 two pairs (segments 0..3), cols = 9.
  const std::vector<std::int32_t> seg = {0, 0, 0, 1, 1, 1, 1, 2, 2,  //
                                         0, 0, 1, 1, 2, 2, 3, 3, 3};
  const std::vector<std::uint8_t> mask = {0, 1, 1, 0, 1, 1, 1, 0, 0,  //
                                          0, 1, 0, 1, 0, 1, 0, 1, 1};
  const std::vector<std::uint32_t> pairs = {1, 2};
  const auto sides = pair_sides(mask.data(), seg.data(), pairs.data(), 2, 9);
  // Aligned with trained_targets: row 0's inputs 0, 1 (pair 0's chosen), 3,
  // 4, 5 (its rejected); row 1's inputs 0 (pair 1's chosen), 2 (pair 1's
  // rejected), 4 (pair 2's chosen), 6 and 7 (pair 2's rejected).
  CHECK(trained_targets(mask.data(), seg.data(), 2, 9) ==
        std::vector<std::int64_t>{0, 1, 3, 4, 5, 8, 10, 12, 14, 15});
  CHECK(sides == std::vector<std::int64_t>{0, 0, 1, 1, 1, 2, 3, 4, 5, 5});
  // A trained token in the padding's segment is refused, naming the row.
  std::vector<std::uint8_t> bad = mask;
  bad[8] = 1;
  bad[7] = 1;
  CHECK_THROWS_WITH(pair_sides(bad.data(), seg.data(), pairs.data(), 2, 9),
                    Catch::Matchers::Contains("row 0 has a trained token in segment 2"));
}
