#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

// Packing whole documents (conversations) into fixed windows: the rule, as
// plain logic (no files), so it is unit-tested on its own. The loader builds
// one PackPlan per split from the shards' document indexes; every rank builds
// the same plan, so windows are numbered alike whatever the world size.
namespace wireup::data {

// What happens to a document longer than a window.
enum class Overlong {
  Truncate,  // keep its first `capacity` tokens
  Split,     // cut it into pieces of `capacity` tokens (the last shorter), each packed alone
  Drop,      // leave it out
};

// "truncate", "split", "drop"; InputError naming `what` for anything else.
Overlong parse_overlong(const std::string& text, const std::string& what);
const char* overlong_name(Overlong o);

// Tokens [first, first + length) of the split's stream: a whole document, or
// a piece of an overlong one.
struct PackPiece {
  std::uint64_t first = 0;
  std::uint64_t length = 0;
  bool operator==(const PackPiece&) const = default;
};

// Pair mode (preference data sets): a pair is two consecutive documents of
// the stream, prompt + chosen completion then prompt + rejected completion.
struct PackPair {
  std::uint64_t first = 0;     // the chosen document's first token; the rejected one follows it
  std::uint64_t chosen = 0;    // tokens of the chosen document (prompt + completion)
  std::uint64_t rejected = 0;  // tokens of the rejected document
  // Each document's prompt: its tokens before the completion (before its
  // first loss-mask bit). Read by cut_pair only when the pair is longer than
  // a row, so a caller may leave them 0 for the pairs that fit.
  std::uint64_t chosen_prompt = 0;
  std::uint64_t rejected_prompt = 0;
};

// What a row keeps of a pair: the first `chosen` tokens of the chosen
// document and the first `rejected` of the rejected one (TRL's
// truncation_mode="keep_start"), or nothing when `dropped`.
struct PairCut {
  std::uint64_t chosen = 0;
  std::uint64_t rejected = 0;
  bool truncated = false;  // cut to fit
  bool dropped = false;    // left out
  bool operator==(const PairCut&) const = default;
};

// The rule for one pair and a row of `capacity` tokens (docs/data-loader.md,
// "Pair mode"). A pair that fits (chosen + rejected <= capacity) is kept
// whole. Otherwise, with Overlong::Drop it is dropped; with Truncate both
// prompts are kept and the completions share the room left, R = capacity -
// chosen_prompt - rejected_prompt, fairly: each side gets half of R (chosen
// the odd token), and a side shorter than its half leaves the rest to the
// other. So k_c = min(c, max(ceil(R/2), R - r)) and k_r = min(r, R - k_c)
// for completions of c and r tokens. The pair is dropped when a side would
// keep no trained target: no completion token, or only one after an empty
// prompt (a segment's first token is never a target). Overlong::Split does
// not apply to pairs: std::invalid_argument (the loader refuses it first).
PairCut cut_pair(const PackPair& pair, std::uint64_t capacity, Overlong overlong);

struct PackStats {
  std::uint64_t documents = 0;    // in the split
  std::uint64_t truncated = 0;    // Overlong::Truncate: documents cut to a window
  std::uint64_t untrained = 0;    // of those, the ones whose kept tokens train no target
  std::uint64_t split = 0;        // Overlong::Split: documents cut into pieces
  std::uint64_t dropped = 0;      // Overlong::Drop: documents left out
  std::uint64_t tokens = 0;       // in the split
  std::uint64_t tokens_used = 0;  // placed in windows
  std::uint64_t windows = 0;
  std::uint64_t capacity = 0;  // tokens a window holds
  // Pair mode only (0 otherwise): the split's pairs, those cut to fit a row
  // (keep_start) and those left out (their prompts fill the row, or
  // Overlong::Drop). `documents` is then 2 * pairs.
  std::uint64_t pairs = 0;
  std::uint64_t truncated_pairs = 0;
  std::uint64_t dropped_pairs = 0;
  // tokens_used / (windows * capacity): 1.0 means no padding at all.
  double efficiency() const {
    return windows == 0 ? 0.0
                        : static_cast<double>(tokens_used) /
                              (static_cast<double>(windows) * static_cast<double>(capacity));
  }
};

// Windows of `capacity` tokens, each holding whole documents in stream
// order, the rest padding. Built by best-fit decreasing: pieces longest
// first (ties: earlier first) go into the fullest window they fit, a new
// window when none fits; windows are numbered in the order they were
// opened. Deterministic: the same documents give the same plan.
class PackPlan {
 public:
  PackPlan() = default;
  // `doc_starts`: each document's first token in the stream, then the
  // stream's length (strictly increasing, from 0). `capacity` >= 1.
  PackPlan(std::span<const std::uint64_t> doc_starts, std::uint64_t capacity, Overlong overlong);
  // Pair mode: the unit packed is the pair (cut by cut_pair), so both of its
  // documents land in the same window, chosen then rejected, each its own
  // piece: window w's pieces 2i and 2i+1 are its pair i's chosen and
  // rejected documents. `pairs` in stream order, each after the previous one.
  static PackPlan for_pairs(std::span<const PackPair> pairs, std::uint64_t capacity,
                            Overlong overlong);

  std::uint64_t windows() const { return window_starts_.empty() ? 0 : window_starts_.size() - 1; }
  // Window w's pieces, in stream order; their lengths sum to at most capacity.
  std::span<const PackPiece> window(std::uint64_t w) const {
    return {pieces_.data() + window_starts_[w], window_starts_[w + 1] - window_starts_[w]};
  }
  const PackStats& stats() const { return stats_; }
  bool paired() const { return paired_; }  // built by for_pairs
  // The loader counts the truncated documents left without a trained target
  // (it reads their masks; the plan sees lengths only).
  void set_untrained(std::uint64_t n) { stats_.untrained = n; }

 private:
  std::vector<PackPiece> pieces_;             // window by window
  std::vector<std::uint64_t> window_starts_;  // into pieces_, then pieces_.size()
  PackStats stats_;
  bool paired_ = false;

  // Best-fit decreasing over units of `per_unit` consecutive pieces (1: a
  // document or a piece of one; 2: a pair), then the windows laid out.
  void place(const std::vector<PackPiece>& pieces, std::size_t per_unit);
};

}  // namespace wireup::data
