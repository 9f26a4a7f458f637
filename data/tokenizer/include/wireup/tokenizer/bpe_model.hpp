#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wireup::tokenizer {

// Byte-level BPE on one pre-tokenized piece: the piece starts as its bytes'
// tokens and the adjacent pair of lowest rank merges (the leftmost of equal
// ranks) until no pair merges: tiktoken's algorithm, and Hugging Face's BPE
// when the pairs are its merges. Pure logic: no regex, no file format.
class BpeModel {
 public:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

  // tiktoken's rule: `tokens` by rank (= id); two parts merge when their
  // bytes together are a token, that token's rank being the pair's.
  // Every one of the 256 bytes must be a token (std::invalid_argument).
  static BpeModel from_ranks(const std::vector<std::string>& tokens, bool ignore_merges = true);
  // Hugging Face's: `tokens` by id ("" unused), only the listed pairs merge,
  // priority their order. std::invalid_argument naming a pair whose parts or
  // result are not tokens.
  static BpeModel from_merges(const std::vector<std::string>& tokens,
                              const std::vector<std::pair<std::string, std::string>>& merges,
                              bool ignore_merges);

  // Appends the piece's ids to `out`.
  void encode(std::string_view piece, std::vector<int>& out) const;
  // The two algorithms encode() picks from by length (exposed for tests):
  // a scan for the lowest pair, O(n^2) for n bytes but fast for the short
  // pieces of real text, and a heap over a linked list, O(n log n).
  void encode_scan(std::string_view piece, std::vector<int>& out) const;
  void encode_heap(std::string_view piece, std::vector<int>& out) const;

  // The token with exactly these bytes, or kNone.
  std::uint32_t find(std::string_view bytes) const;
  std::size_t size() const { return offsets_.size() - 1; }
  std::string_view bytes_of(std::uint32_t id) const {
    return std::string_view(arena_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

 private:
  struct PairSlot {
    std::uint64_t key = ~0ull;  // left << 32 | right
    std::uint32_t rank = kNone, merged = kNone;
  };
  explicit BpeModel(const std::vector<std::string>& tokens, bool ignore_merges);
  void add_pair(std::uint32_t left, std::uint32_t right, std::uint32_t rank, std::uint32_t merged);
  void size_pairs(std::size_t count);
  const PairSlot* pair(std::uint32_t left, std::uint32_t right) const;

  std::string arena_;                   // every token's bytes, by id
  std::vector<std::uint32_t> offsets_;  // id -> start in arena_, size()+1 entries
  static constexpr std::uint64_t kEmptySlot = ~0ull;
  std::vector<std::uint64_t> table_;  // bytes -> hash tag << 32 | id, open addressing
  std::uint64_t table_mask_ = 0;
  std::vector<PairSlot> pairs_;  // (left, right) -> rank and merged id
  std::uint64_t pair_mask_ = 0;
  std::array<std::uint32_t, 256> byte_id_{};
  bool ignore_merges_ = true;
};

}  // namespace wireup::tokenizer
