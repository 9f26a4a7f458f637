#include "eval/eval_plan.hpp"

#include <stdexcept>

#include "wireup/error.hpp"

namespace wireup::train {

std::optional<std::uint64_t> EvalPlan::chunk_of(std::uint64_t rank, std::uint64_t forward) const {
  const std::uint64_t c = forward * world + rank;
  if (rank >= world || c >= chunks()) return std::nullopt;
  return c;
}

std::uint64_t EvalPlan::windows_in(std::uint64_t chunk) const {
  if (chunk >= chunks()) return 0;
  const std::uint64_t first = first_window(chunk);
  return windows - first < batch ? windows - first : batch;
}

std::uint64_t windows_that_fit(std::uint64_t split_tokens, std::uint64_t context) {
  if (context == 0 || split_tokens == 0) return 0;
  return (split_tokens - 1) / context;
}

EvalPlan plan_eval(std::uint64_t split_tokens, std::uint64_t context, std::uint64_t windows,
                   std::uint64_t batch, std::uint64_t world, const std::string& what) {
  if (windows == 0) throw InputError("--eval_batches 0: expected at least 1 window to evaluate");
  if (context == 0) throw InputError("--max_context_width 0: expected at least 1 token");
  if (batch == 0) throw InputError("--eval_batch_size 0: expected at least 1 window per pass");
  if (world == 0) throw InputError("bad world layout: world size 0");
  // i*T + T must stay below 2^64 for the last window.
  if (context > (UINT64_MAX - 1) / (windows + 1))
    throw InputError("--eval_batches " + std::to_string(windows) + " x --max_context_width " +
                     std::to_string(context) + ": too many tokens");
  const std::uint64_t fit = windows_that_fit(split_tokens, context);
  if (fit < windows)
    throw InputError(what + ": " + std::to_string(split_tokens) + " tokens hold " +
                     std::to_string(fit) + " windows of " + std::to_string(context + 1) +
                     " tokens (--max_context_width " + std::to_string(context) + " + 1, stride " +
                     std::to_string(context) + "), but --eval_batches asks for " +
                     std::to_string(windows) + ": pass --eval_batches " + std::to_string(fit) +
                     " or less" + (fit == 0 ? " (none fit: use a shorter context)" : ""));
  return EvalPlan{windows, context, batch, world};
}

double mean_eval_loss(const EvalPlan& plan, const std::vector<double>& chunk_loss_sums) {
  if (chunk_loss_sums.size() != plan.chunks())
    throw std::logic_error("mean_eval_loss: one sum per chunk expected");
  double sum = 0;
  for (double s : chunk_loss_sums) sum += s;
  return sum / static_cast<double>(plan.targets());
}

}  // namespace wireup::train
