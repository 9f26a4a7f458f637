#include "wireup/data/packing.hpp"

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>
#include <utility>

#include "wireup/error.hpp"

namespace wireup::data {

Overlong parse_overlong(const std::string& text, const std::string& what) {
  if (text == "truncate") return Overlong::Truncate;
  if (text == "split") return Overlong::Split;
  if (text == "drop") return Overlong::Drop;
  throw InputError(what + " '" + text + "': expected truncate, split or drop");
}

const char* overlong_name(Overlong o) {
  switch (o) {
    case Overlong::Truncate:
      return "truncate";
    case Overlong::Split:
      return "split";
    case Overlong::Drop:
      return "drop";
  }
  return "?";
}

namespace {

// The pieces the documents give under `overlong`, in stream order.
std::vector<PackPiece> cut_pieces(std::span<const std::uint64_t> doc_starts, std::uint64_t capacity,
                                  Overlong overlong, PackStats& stats) {
  std::vector<PackPiece> pieces;
  pieces.reserve(doc_starts.size());
  for (std::size_t d = 0; d + 1 < doc_starts.size(); ++d) {
    const std::uint64_t first = doc_starts[d], length = doc_starts[d + 1] - first;
    if (doc_starts[d + 1] <= first)
      throw std::invalid_argument("PackPlan: document starts must strictly increase");
    stats.tokens += length;
    if (length <= capacity) {
      pieces.push_back({first, length});
      continue;
    }
    switch (overlong) {
      case Overlong::Truncate:
        ++stats.truncated;
        pieces.push_back({first, capacity});
        break;
      case Overlong::Split:
        ++stats.split;
        for (std::uint64_t at = 0; at < length; at += capacity)
          pieces.push_back({first + at, std::min(capacity, length - at)});
        break;
      case Overlong::Drop:
        ++stats.dropped;
        break;
    }
  }
  return pieces;
}

// A side keeps a trained target when it keeps a completion token that is
// not its segment's first token.
bool keeps_target(std::uint64_t prompt, std::uint64_t kept) {
  return kept > 0 && prompt + kept >= 2;
}

}  // namespace

PairCut cut_pair(const PackPair& p, std::uint64_t capacity, Overlong overlong) {
  if (p.chosen + p.rejected <= capacity) return {p.chosen, p.rejected, false, false};
  if (overlong == Overlong::Split)
    throw std::invalid_argument("cut_pair: Overlong::Split does not apply to pairs");
  if (overlong == Overlong::Drop) return {0, 0, false, true};
  if (p.chosen_prompt > p.chosen || p.rejected_prompt > p.rejected)
    throw std::invalid_argument("cut_pair: a prompt longer than its document");
  const std::uint64_t prompts = p.chosen_prompt + p.rejected_prompt;
  const std::uint64_t room = capacity > prompts ? capacity - prompts : 0;
  const std::uint64_t c = p.chosen - p.chosen_prompt, r = p.rejected - p.rejected_prompt;
  const std::uint64_t kc = std::min(c, std::max(room - room / 2, room > r ? room - r : 0));
  const std::uint64_t kr = std::min(r, room - kc);
  if (!keeps_target(p.chosen_prompt, kc) || !keeps_target(p.rejected_prompt, kr))
    return {0, 0, false, true};
  return {p.chosen_prompt + kc, p.rejected_prompt + kr, true, false};
}

PackPlan::PackPlan(std::span<const std::uint64_t> doc_starts, std::uint64_t capacity,
                   Overlong overlong) {
  if (capacity == 0) throw std::invalid_argument("PackPlan: capacity must be at least 1");
  if (!doc_starts.empty() && doc_starts.front() != 0)
    throw std::invalid_argument("PackPlan: the first document must start at 0");
  stats_.capacity = capacity;
  stats_.documents = doc_starts.empty() ? 0 : doc_starts.size() - 1;
  place(cut_pieces(doc_starts, capacity, overlong, stats_), 1);
}

PackPlan PackPlan::for_pairs(std::span<const PackPair> pairs, std::uint64_t capacity,
                             Overlong overlong) {
  if (capacity == 0) throw std::invalid_argument("PackPlan: capacity must be at least 1");
  PackPlan plan;
  plan.paired_ = true;
  auto& st = plan.stats_;
  st.capacity = capacity;
  st.pairs = pairs.size();
  st.documents = 2 * pairs.size();
  std::vector<PackPiece> pieces;
  pieces.reserve(2 * pairs.size());
  std::uint64_t end = 0;
  for (const PackPair& p : pairs) {
    if (p.first < end || p.chosen == 0 || p.rejected == 0)
      throw std::invalid_argument("PackPlan: pairs must be non-empty and in stream order");
    end = p.first + p.chosen + p.rejected;
    st.tokens += p.chosen + p.rejected;
    const PairCut cut = cut_pair(p, capacity, overlong);
    st.truncated_pairs += cut.truncated ? 1 : 0;
    if (cut.dropped) {
      ++st.dropped_pairs;
      continue;
    }
    pieces.push_back({p.first, cut.chosen});
    pieces.push_back({p.first + p.chosen, cut.rejected});
  }
  plan.place(pieces, 2);
  return plan;
}

void PackPlan::place(const std::vector<PackPiece>& pieces, std::size_t per_unit) {
  // Best-fit decreasing: longest unit first, each into the window whose room
  // fits it most tightly. `room` holds (free tokens, window) of the open
  // windows; a full window leaves it.
  const std::size_t units = pieces.size() / per_unit;
  std::vector<std::uint64_t> length(units, 0);
  for (std::size_t i = 0; i < pieces.size(); ++i) length[i / per_unit] += pieces[i].length;
  std::vector<std::size_t> order(units);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return length[a] > length[b]; });
  std::vector<std::uint64_t> window_of(units);
  std::set<std::pair<std::uint64_t, std::uint64_t>> room;
  std::uint64_t windows = 0;
  for (const std::size_t u : order) {
    const std::uint64_t len = length[u];
    auto it = room.lower_bound({len, 0});
    std::uint64_t w, left;
    if (it == room.end()) {
      w = windows++;
      left = stats_.capacity - len;
    } else {
      w = it->second;
      left = it->first - len;
      room.erase(it);
    }
    if (left > 0) room.insert({left, w});
    window_of[u] = w;
    stats_.tokens_used += len;
  }
  stats_.windows = windows;

  // Lay the windows out one after another, each window's pieces in stream
  // order (the pieces are in stream order already: a counting sort by window).
  window_starts_.assign(windows + 1, 0);
  for (const auto w : window_of) window_starts_[w + 1] += per_unit;
  std::partial_sum(window_starts_.begin(), window_starts_.end(), window_starts_.begin());
  std::vector<std::uint64_t> fill(window_starts_.begin(), window_starts_.end() - 1);
  pieces_.resize(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i)
    pieces_[fill[window_of[i / per_unit]]++] = pieces[i];
}

}  // namespace wireup::data
