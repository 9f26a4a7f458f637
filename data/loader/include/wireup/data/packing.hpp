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

  std::uint64_t windows() const { return window_starts_.empty() ? 0 : window_starts_.size() - 1; }
  // Window w's pieces, in stream order; their lengths sum to at most capacity.
  std::span<const PackPiece> window(std::uint64_t w) const {
    return {pieces_.data() + window_starts_[w], window_starts_[w + 1] - window_starts_[w]};
  }
  const PackStats& stats() const { return stats_; }
  // The loader counts the truncated documents left without a trained target
  // (it reads their masks; the plan sees lengths only).
  void set_untrained(std::uint64_t n) { stats_.untrained = n; }

 private:
  std::vector<PackPiece> pieces_;             // window by window
  std::vector<std::uint64_t> window_starts_;  // into pieces_, then pieces_.size()
  PackStats stats_;
};

}  // namespace wireup::data
