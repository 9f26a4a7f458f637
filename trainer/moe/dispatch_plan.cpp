#include "moe/dispatch_plan.hpp"

#include <stdexcept>
#include <string>

namespace wireup::train::moe {

DispatchPlan plan_dispatch(std::span<const std::int64_t> expert_of, std::int64_t experts,
                           std::int64_t ranks) {
  if (experts < 1 || ranks < 1 || experts % ranks != 0)
    throw std::invalid_argument("plan_dispatch: " + std::to_string(experts) + " experts over " +
                                std::to_string(ranks) + " ranks: expected a positive multiple");
  DispatchPlan p;
  p.experts = experts;
  p.ranks = ranks;
  // A counting sort: stable, O(T*k + E).
  p.expert_offsets.assign(static_cast<std::size_t>(experts) + 1, 0);
  for (std::size_t a = 0; a < expert_of.size(); ++a) {
    const std::int64_t e = expert_of[a];
    if (e < 0 || e >= experts)
      throw std::invalid_argument("plan_dispatch: assignment " + std::to_string(a) +
                                  " chose expert " + std::to_string(e) + " of " +
                                  std::to_string(experts));
    ++p.expert_offsets[static_cast<std::size_t>(e) + 1];
  }
  for (std::int64_t e = 0; e < experts; ++e) p.expert_offsets[e + 1] += p.expert_offsets[e];
  p.order.resize(expert_of.size());
  std::vector<std::int64_t> next(p.expert_offsets.begin(), p.expert_offsets.end() - 1);
  for (std::size_t a = 0; a < expert_of.size(); ++a)
    p.order[static_cast<std::size_t>(next[static_cast<std::size_t>(expert_of[a])]++)] =
        static_cast<std::int64_t>(a);
  const std::int64_t per_rank = experts / ranks;
  p.rank_offsets.resize(static_cast<std::size_t>(ranks) + 1);
  for (std::int64_t r = 0; r <= ranks; ++r) p.rank_offsets[r] = p.expert_offsets[r * per_rank];
  return p;
}

ReceivePlan plan_receive(std::span<const std::int64_t> counts, std::int64_t ranks,
                         std::int64_t local_experts) {
  if (ranks < 1 || local_experts < 1 ||
      counts.size() != static_cast<std::size_t>(ranks * local_experts))
    throw std::invalid_argument("plan_receive: " + std::to_string(counts.size()) + " counts for " +
                                std::to_string(ranks) + " ranks x " +
                                std::to_string(local_experts) + " local experts");
  const auto at = [&](std::int64_t src, std::int64_t e) {
    const std::int64_t c = counts[static_cast<std::size_t>(src * local_experts + e)];
    if (c < 0)
      throw std::invalid_argument("plan_receive: rank " + std::to_string(src) + " sends " +
                                  std::to_string(c) + " rows for expert " + std::to_string(e));
    return c;
  };
  ReceivePlan p;
  // Where each (src, e) block starts among the rows as received (source-major).
  std::vector<std::int64_t> arrived(counts.size());
  std::int64_t row = 0;
  p.source_rows.assign(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t src = 0; src < ranks; ++src)
    for (std::int64_t e = 0; e < local_experts; ++e) {
      arrived[static_cast<std::size_t>(src * local_experts + e)] = row;
      row += at(src, e);
      p.source_rows[static_cast<std::size_t>(src)] += at(src, e);
    }
  p.order.reserve(static_cast<std::size_t>(row));
  p.expert_offsets.assign(static_cast<std::size_t>(local_experts) + 1, 0);
  for (std::int64_t e = 0; e < local_experts; ++e) {
    for (std::int64_t src = 0; src < ranks; ++src) {
      const std::int64_t first = arrived[static_cast<std::size_t>(src * local_experts + e)];
      for (std::int64_t i = 0; i < at(src, e); ++i) p.order.push_back(first + i);
    }
    p.expert_offsets[static_cast<std::size_t>(e) + 1] = static_cast<std::int64_t>(p.order.size());
  }
  return p;
}

std::int64_t remote_rows(const DispatchPlan& plan, std::int64_t rank) {
  return plan.rank_offsets.back() - plan.rank_rows(rank);
}

}  // namespace wireup::train::moe
