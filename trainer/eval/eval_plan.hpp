#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wireup::train {

// Which tokens `wireup-train eval` reads and which rank reads them. Plain C++.
//
// Window i (0 <= i < windows) is tokens [i*T, i*T + T] of the split's token
// stream (its shards in manifest order, documents back to back as stored):
// the first T are the inputs, the last T the targets; the loss is the mean
// over all windows*T targets. Windows are grouped into chunks of `batch`
// consecutive windows (the last one may be shorter), one forward pass each;
// chunk c goes to rank c % world. Every world size so computes the same
// chunks with the same rows, and the sums are combined in chunk order: the
// result does not depend on the world size.
struct EvalPlan {
  std::uint64_t windows = 0;  // N (--eval_batches)
  std::uint64_t context = 0;  // T (--max_context_width)
  std::uint64_t batch = 1;    // windows per forward pass (--eval_batch_size)
  std::uint64_t world = 1;

  std::uint64_t chunks() const { return (windows + batch - 1) / batch; }
  // Forward passes every rank makes (all in step: FSDP gathers in each). A
  // rank with fewer chunks than that makes its last passes on padding.
  std::uint64_t forwards_per_rank() const { return (chunks() + world - 1) / world; }
  // The chunk of rank r's forward pass f, or nullopt for a padding pass.
  std::optional<std::uint64_t> chunk_of(std::uint64_t rank, std::uint64_t forward) const;
  std::uint64_t first_window(std::uint64_t chunk) const { return chunk * batch; }
  std::uint64_t windows_in(std::uint64_t chunk) const;
  // Window w's tokens: [first_token(w), first_token(w) + tokens_per_window()).
  std::uint64_t first_token(std::uint64_t window) const { return window * context; }
  std::uint64_t tokens_per_window() const { return context + 1; }
  std::uint64_t targets() const { return windows * context; }
};

// Windows of T+1 tokens at stride T that fit in a split of `split_tokens`:
// (split_tokens - 1) / T, 0 for an empty split.
std::uint64_t windows_that_fit(std::uint64_t split_tokens, std::uint64_t context);

// Checks the numbers and builds the plan. `what` names the data and split in
// errors ("DATA/manifest.json (validation split)"). InputError when windows
// or context or batch is 0, or when the split holds fewer than `windows`
// windows (the message says how many fit).
EvalPlan plan_eval(std::uint64_t split_tokens, std::uint64_t context, std::uint64_t windows,
                   std::uint64_t batch, std::uint64_t world, const std::string& what);

// The mean loss over all targets from each chunk's loss sum (its mean loss
// times its windows * T), summed in chunk order.
double mean_eval_loss(const EvalPlan& plan, const std::vector<double>& chunk_loss_sums);

}  // namespace wireup::train
