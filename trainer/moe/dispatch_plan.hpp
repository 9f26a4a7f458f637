#pragma once
#include <cstdint>
#include <span>
#include <vector>

// Where one MoE layer's token rows go, as plain index arithmetic (no
// LibTorch): the router chose k experts for each of T tokens; the T*k
// (token, slot) assignments are grouped by expert so that each expert's rows
// are contiguous for one grouped GEMM, and, with expert parallelism over R
// ranks (experts [r*E/R, (r+1)*E/R) on rank r), so that each rank's rows are
// contiguous for one all-to-all. Dropless: every assignment is kept.
// docs/moe.md, "Dispatch".
namespace wireup::train::moe {

// The sending side. Assignment a = token*k + slot.
struct DispatchPlan {
  std::int64_t experts = 0;
  std::int64_t ranks = 1;
  // The assignments in expert order; within an expert, in assignment order
  // (a stable sort, so the plan is the same on every run).
  std::vector<std::int64_t> order;
  // Expert e's rows are order[expert_offsets[e] .. expert_offsets[e+1]).
  std::vector<std::int64_t> expert_offsets;  // E + 1
  // Rank r's rows (its experts' rows, in expert order) are
  // order[rank_offsets[r] .. rank_offsets[r+1]).
  std::vector<std::int64_t> rank_offsets;  // R + 1

  std::int64_t expert_rows(std::int64_t e) const {
    return expert_offsets[e + 1] - expert_offsets[e];
  }
  std::int64_t rank_rows(std::int64_t r) const { return rank_offsets[r + 1] - rank_offsets[r]; }
  std::int64_t experts_per_rank() const { return experts / ranks; }
};

// `expert_of`: the chosen expert of each assignment (T*k values, each in
// [0, experts)). `experts` must be a multiple of `ranks`. std::invalid_argument
// naming the value otherwise (a router bug, never user input).
DispatchPlan plan_dispatch(std::span<const std::int64_t> expert_of, std::int64_t experts,
                           std::int64_t ranks = 1);

// The receiving side of the all-to-all on one rank: `counts[src * L + e]` is
// how many rows source rank src sends for this rank's local expert e (L local
// experts). The rows arrive source-major (all of rank 0's, in expert order,
// then rank 1's, ...); the grouped GEMM wants them expert-major.
struct ReceivePlan {
  // Received row order[i] is the i-th row in expert-major order (within an
  // expert, by source rank), so gathering by `order` permutes into it and
  // scattering back by `order` undoes it.
  std::vector<std::int64_t> order;
  std::vector<std::int64_t> expert_offsets;  // L + 1, into the expert-major rows
  std::vector<std::int64_t> source_rows;     // R: rows from each source rank
};
ReceivePlan plan_receive(std::span<const std::int64_t> counts, std::int64_t ranks,
                         std::int64_t local_experts);

// Rows this rank (`rank`) sends to other ranks in one all-to-all: the rows
// that cross the network (the same number come back in the combine).
std::int64_t remote_rows(const DispatchPlan& plan, std::int64_t rank);

}  // namespace wireup::train::moe
