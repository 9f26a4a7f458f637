#include "wireup/tokenizer/bpe_model.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace wireup::tokenizer {
namespace {

// Pieces up to this many bytes use the scan (nearly all of real text).
constexpr std::size_t kScanMax = 96;

std::uint64_t hash_bytes(std::string_view s) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xFF51AFD7ED558CCDull;
    h ^= h >> 32;
  }
  std::uint64_t w = 0;
  std::memcpy(&w, s.data() + i, s.size() - i);
  h = (h ^ w) * 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 29);
}

std::uint64_t hash_pair(std::uint64_t key) {
  key *= 0x9E3779B97F4A7C15ull;
  return key ^ (key >> 31);
}

std::uint64_t table_size_for(std::size_t count) {
  std::uint64_t n = 16;
  while (n < count * 2) n <<= 1;
  return n;
}

}  // namespace

BpeModel::BpeModel(const std::vector<std::string>& tokens, bool ignore_merges)
    : ignore_merges_(ignore_merges) {
  offsets_.reserve(tokens.size() + 1);
  std::size_t total = 0;
  for (const auto& t : tokens) total += t.size();
  if (total >= kNone) throw std::invalid_argument("the vocabulary's tokens exceed 4 GB");
  arena_.reserve(total);
  for (const auto& t : tokens) {
    offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
    arena_ += t;
  }
  offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
  const auto n = table_size_for(tokens.size());
  table_.assign(n, kEmptySlot);
  table_mask_ = n - 1;
  for (std::uint32_t id = 0; id < tokens.size(); ++id) {
    if (tokens[id].empty()) continue;
    if (find(tokens[id]) != kNone)
      throw std::invalid_argument("token " + std::to_string(id) + " repeats token " +
                                  std::to_string(find(tokens[id])));
    const auto h = hash_bytes(tokens[id]);
    auto at = h & table_mask_;
    while (table_[at] != kEmptySlot) at = (at + 1) & table_mask_;
    table_[at] = (h & ~0xFFFFFFFFull) | id;  // the hash's high half tags the slot
  }
  for (unsigned b = 0; b < 256; ++b) {
    const char c = static_cast<char>(b);
    byte_id_[b] = find(std::string_view(&c, 1));
    if (byte_id_[b] == kNone)
      throw std::invalid_argument("byte " + std::to_string(b) +
                                  " is not a token (a byte-level vocabulary has all 256)");
  }
}

std::uint32_t BpeModel::find(std::string_view bytes) const {
  const auto h = hash_bytes(bytes);
  const auto tag = h & ~0xFFFFFFFFull;
  for (auto at = h & table_mask_;; at = (at + 1) & table_mask_) {
    const auto slot = table_[at];
    if (slot == kEmptySlot) return kNone;
    const auto id = static_cast<std::uint32_t>(slot);
    if ((slot & ~0xFFFFFFFFull) == tag && bytes_of(id) == bytes) return id;
  }
}

void BpeModel::size_pairs(std::size_t count) {
  const auto n = table_size_for(count);
  pairs_.assign(n, PairSlot{});
  pair_mask_ = n - 1;
}

void BpeModel::add_pair(std::uint32_t left, std::uint32_t right, std::uint32_t rank,
                        std::uint32_t merged) {
  const std::uint64_t key = (static_cast<std::uint64_t>(left) << 32) | right;
  auto at = hash_pair(key) & pair_mask_;
  while (pairs_[at].key != ~0ull && pairs_[at].key != key) at = (at + 1) & pair_mask_;
  if (pairs_[at].key == key && pairs_[at].rank <= rank) return;  // the first listing wins
  pairs_[at] = {key, rank, merged};
}

const BpeModel::PairSlot* BpeModel::pair(std::uint32_t left, std::uint32_t right) const {
  const std::uint64_t key = (static_cast<std::uint64_t>(left) << 32) | right;
  for (auto at = hash_pair(key) & pair_mask_;; at = (at + 1) & pair_mask_) {
    const auto& s = pairs_[at];
    if (s.key == key) return &s;
    if (s.key == ~0ull) return nullptr;
  }
}

BpeModel BpeModel::from_ranks(const std::vector<std::string>& tokens, bool ignore_merges) {
  BpeModel m(tokens, ignore_merges);
  // Every split of every token into two tokens is a pair of that rank.
  std::vector<std::pair<std::uint64_t, std::uint32_t>> found;
  for (std::uint32_t id = 0; id < tokens.size(); ++id) {
    const std::string_view t = tokens[id];
    for (std::size_t k = 1; k < t.size(); ++k) {
      const auto a = m.find(t.substr(0, k));
      if (a == kNone) continue;
      const auto b = m.find(t.substr(k));
      if (b != kNone) found.emplace_back((static_cast<std::uint64_t>(a) << 32) | b, id);
    }
  }
  m.size_pairs(found.size());
  for (const auto& [key, id] : found)
    m.add_pair(static_cast<std::uint32_t>(key >> 32), static_cast<std::uint32_t>(key), id, id);
  return m;
}

BpeModel BpeModel::from_merges(const std::vector<std::string>& tokens,
                               const std::vector<std::pair<std::string, std::string>>& merges,
                               bool ignore_merges) {
  BpeModel m(tokens, ignore_merges);
  if (merges.size() >= kNone) throw std::invalid_argument("too many merges");
  m.size_pairs(merges.size());
  for (std::uint32_t i = 0; i < merges.size(); ++i) {
    const auto& [a, b] = merges[i];
    const auto ia = m.find(a), ib = m.find(b), merged = m.find(a + b);
    if (ia == kNone || ib == kNone || merged == kNone)
      throw std::invalid_argument("merge " + std::to_string(i) + " joins " +
                                  (ia == kNone || ib == kNone ? "a part" : "into a token") +
                                  " that is not in the vocabulary");
    m.add_pair(ia, ib, i, merged);
  }
  return m;
}

void BpeModel::encode(std::string_view piece, std::vector<int>& out) const {
  if (piece.size() == 1) {
    out.push_back(static_cast<int>(byte_id_[static_cast<unsigned char>(piece[0])]));
    return;
  }
  if (ignore_merges_) {
    const auto id = find(piece);
    if (id != kNone) {
      out.push_back(static_cast<int>(id));
      return;
    }
  }
  if (piece.size() <= kScanMax)
    encode_scan(piece, out);
  else
    encode_heap(piece, out);
}

void BpeModel::encode_scan(std::string_view piece, std::vector<int>& out) const {
  struct Part {
    std::uint32_t id, rank, merged;  // rank and result of merging with the next part
  };
  thread_local std::vector<Part> parts;
  parts.clear();
  for (const char c : piece) parts.push_back({byte_id_[static_cast<unsigned char>(c)], kNone, 0});
  const auto rate = [&](std::size_t i) {
    const PairSlot* s = i + 1 < parts.size() ? pair(parts[i].id, parts[i + 1].id) : nullptr;
    parts[i].rank = s != nullptr ? s->rank : kNone;
    parts[i].merged = s != nullptr ? s->merged : 0;
  };
  for (std::size_t i = 0; i < parts.size(); ++i) rate(i);
  for (;;) {
    std::size_t best = 0;
    std::uint32_t best_rank = kNone;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i)
      if (parts[i].rank < best_rank) best_rank = parts[i].rank, best = i;
    if (best_rank == kNone) break;
    parts[best].id = parts[best].merged;
    parts.erase(parts.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    rate(best);
    if (best > 0) rate(best - 1);
  }
  for (const auto& p : parts) out.push_back(static_cast<int>(p.id));
}

void BpeModel::encode_heap(std::string_view piece, std::vector<int>& out) const {
  // Parts are a linked list over byte positions (a part keeps its first
  // byte's position); the heap holds rank << 32 | position, so the lowest
  // rank and then the leftmost pops first. An entry is stale when its part
  // is gone or the pair there now has another rank; a pair is pushed again
  // whenever it changes, so the current pairs are always in the heap.
  if (piece.empty()) return;
  if (piece.size() >= kNone) throw std::length_error("piece of 4 GB or more");
  const auto n = static_cast<std::uint32_t>(piece.size());
  std::vector<std::uint32_t> id(n), next(n), prev(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    id[i] = byte_id_[static_cast<unsigned char>(piece[i])];
    next[i] = i + 1 < n ? i + 1 : kNone;
    prev[i] = i > 0 ? i - 1 : kNone;
  }
  std::vector<std::uint64_t> heap;
  heap.reserve(n);
  const auto push = [&](std::uint32_t at) {
    if (at == kNone || next[at] == kNone) return;
    if (const PairSlot* s = pair(id[at], id[next[at]])) {
      heap.push_back((static_cast<std::uint64_t>(s->rank) << 32) | at);
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };
  for (std::uint32_t i = 0; i + 1 < n; ++i)
    if (const PairSlot* s = pair(id[i], id[i + 1]))
      heap.push_back((static_cast<std::uint64_t>(s->rank) << 32) | i);
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const auto top = heap.back();
    heap.pop_back();
    const auto at = static_cast<std::uint32_t>(top);
    if (id[at] == kNone || next[at] == kNone) continue;
    const PairSlot* s = pair(id[at], id[next[at]]);
    if (s == nullptr || s->rank != static_cast<std::uint32_t>(top >> 32)) continue;
    const auto gone = next[at];
    id[at] = s->merged;
    id[gone] = kNone;
    next[at] = next[gone];
    if (next[at] != kNone) prev[next[at]] = at;
    push(prev[at]);
    push(at);
  }
  for (std::uint32_t i = 0; i != kNone; i = next[i]) out.push_back(static_cast<int>(id[i]));
}

}  // namespace wireup::tokenizer
