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

}  // namespace

PackPlan::PackPlan(std::span<const std::uint64_t> doc_starts, std::uint64_t capacity,
                   Overlong overlong) {
  if (capacity == 0) throw std::invalid_argument("PackPlan: capacity must be at least 1");
  if (!doc_starts.empty() && doc_starts.front() != 0)
    throw std::invalid_argument("PackPlan: the first document must start at 0");
  stats_.capacity = capacity;
  stats_.documents = doc_starts.empty() ? 0 : doc_starts.size() - 1;
  const std::vector<PackPiece> pieces = cut_pieces(doc_starts, capacity, overlong, stats_);

  // Best-fit decreasing: longest first, each into the window whose room
  // fits it most tightly. `room` holds (free tokens, window) of the open
  // windows; a full window leaves it.
  std::vector<std::size_t> order(pieces.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return pieces[a].length > pieces[b].length;
  });
  std::vector<std::uint64_t> window_of(pieces.size());
  std::set<std::pair<std::uint64_t, std::uint64_t>> room;
  std::uint64_t windows = 0;
  for (const std::size_t i : order) {
    const std::uint64_t len = pieces[i].length;
    auto it = room.lower_bound({len, 0});
    std::uint64_t w, left;
    if (it == room.end()) {
      w = windows++;
      left = capacity - len;
    } else {
      w = it->second;
      left = it->first - len;
      room.erase(it);
    }
    if (left > 0) room.insert({left, w});
    window_of[i] = w;
    stats_.tokens_used += len;
  }
  stats_.windows = windows;

  // Lay the windows out one after another, each window's pieces in stream
  // order (the pieces are in stream order already: a counting sort by window).
  window_starts_.assign(windows + 1, 0);
  for (const auto w : window_of) ++window_starts_[w + 1];
  std::partial_sum(window_starts_.begin(), window_starts_.end(), window_starts_.begin());
  std::vector<std::uint64_t> fill(window_starts_.begin(), window_starts_.end() - 1);
  pieces_.resize(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) pieces_[fill[window_of[i]]++] = pieces[i];
}

}  // namespace wireup::data
