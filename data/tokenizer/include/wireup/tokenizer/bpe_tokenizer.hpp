#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/tokenizer/added_tokens.hpp"
#include "wireup/tokenizer/bpe_model.hpp"
#include "wireup/tokenizer/bpe_spec.hpp"
#include "wireup/tokenizer/pretokenizer.hpp"
#include "wireup/tokenizer/unicode_nfc.hpp"

namespace wireup::tokenizer {

// A byte-level BPE tokenizer (Llama 3, Qwen, tiktoken's encodings, Hugging
// Face byte-level BPE): the added tokens that are not special are matched in
// the text first (Qwen's <think>); the text between them is normalized (NFC
// for Qwen) and the pre-tokenizer regex cuts it into pieces, each merged by
// BpeModel. Special tokens are never produced by encode: their spelling in
// text is ordinary text. const and thread-safe.
class BpeTokenizer {
 public:
  // InputError naming `name` when the spec is unusable.
  BpeTokenizer(const BpeSpec& spec, const std::string& name);

  // Appends the text's ids. InputError when the text is not UTF-8.
  void encode(std::string_view text, std::vector<int>& ids) const;
  // As encode(), handing the ids to `sink` every time they cover at least
  // `max_bytes` of (normalized) text, batch boundaries being the pieces':
  // the ids are those of encode(). Calls `between` before each batch.
  // Memory: a normalized copy of the text between two added tokens where
  // it is not NFC already, and the ids of one batch.
  template <class Sink, class Between>
  void encode_batches(std::string_view text, std::size_t max_bytes, Sink&& sink,
                      Between&& between) const {
    std::vector<int> ids;
    std::size_t batch_bytes = 0;
    between();
    for_each_piece(text, [&](std::string_view piece, int added) {
      if (added >= 0) {
        ids.push_back(added);
        batch_bytes += token_length(added);
      } else {
        model_.encode(piece, ids);
        batch_bytes += piece.size();
      }
      if (batch_bytes >= max_bytes) {
        sink(ids);
        ids.clear();
        batch_bytes = 0;
        between();
      }
    });
    sink(ids);
  }
  // The bytes of the ids, exactly (a special token gives its spelling).
  // std::out_of_range naming an id that is not in the vocabulary.
  std::string decode(const std::vector<int>& ids) const;

  std::uint32_t vocab_size() const {
    return static_cast<std::uint32_t>(decode_offsets_.size() - 1);
  }
  int bos_id() const { return bos_; }
  int eos_id() const { return eos_; }
  // The id of the special token spelled `text`, -1 when there is none.
  int special_id(std::string_view text) const;
  // How many bytes decode() gives for `id` (0 for an id not in the vocabulary).
  std::size_t token_length(int id) const {
    if (id < 0 || static_cast<std::size_t>(id) + 1 >= decode_offsets_.size()) return 0;
    return decode_offsets_[id + 1] - decode_offsets_[id];
  }

 private:
  // Calls visit(piece, -1) for each pre-tokenized piece of the text and
  // visit("", id) for each added token matched in it, in text order.
  template <class Visit>
  void for_each_piece(std::string_view text, Visit&& visit) const {
    if (normalization_ != Normalization::None || !added_.empty()) check_utf8(text);
    AddedTokenSplitter::Cursor split(added_, text);
    std::string_view gap;
    int added = -1;
    std::string storage;
    while (split.next(gap, added)) {
      if (!gap.empty()) {
        const auto normalized = normalization_ == Normalization::Nfc ? to_nfc(gap, storage) : gap;
        Pretokenizer::Cursor cursor(pre_, normalized, keep_gaps_);
        std::string_view piece;
        while (cursor.next(piece)) visit(piece, -1);
      }
      if (added >= 0) visit(std::string_view(), added);
    }
  }
  // InputError "not valid UTF-8 at byte N of the text" (N from 1).
  static void check_utf8(std::string_view text);

  std::vector<SpecialToken> specials_;
  AddedTokenSplitter added_;  // the added tokens matched in text
  Normalization normalization_;
  Pretokenizer pre_;
  BpeModel model_;
  bool keep_gaps_;
  std::string decode_arena_;                   // bytes of every id, specials included
  std::vector<std::uint32_t> decode_offsets_;  // id -> start; vocab_size()+1 entries
  std::vector<bool> used_;                     // ids that are tokens
  int bos_, eos_;
};

}  // namespace wireup::tokenizer
