#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/tokenizer/bpe_model.hpp"
#include "wireup/tokenizer/bpe_spec.hpp"
#include "wireup/tokenizer/pretokenizer.hpp"

namespace wireup::tokenizer {

// A byte-level BPE tokenizer (Llama 3, tiktoken's encodings, Hugging Face
// byte-level BPE): the pre-tokenizer regex cuts the text into pieces, each
// piece is merged by BpeModel. Special tokens are never produced by encode:
// their spelling in text is ordinary text. const and thread-safe.
class BpeTokenizer {
 public:
  // InputError naming `name` when the spec is unusable.
  BpeTokenizer(const BpeSpec& spec, const std::string& name);

  // Appends the text's ids. InputError when the text is not UTF-8.
  void encode(std::string_view text, std::vector<int>& ids) const;
  // As encode(), handing the ids to `sink` every time they cover at least
  // `max_bytes` of text, piece boundaries being the regex's: the ids are
  // those of encode(). Calls `between` before each batch.
  template <class Sink, class Between>
  void encode_batches(std::string_view text, std::size_t max_bytes, Sink&& sink,
                      Between&& between) const {
    Pretokenizer::Cursor cursor(pre_, text, keep_gaps_);
    std::vector<int> ids;
    std::string_view piece;
    const char* batch_start = text.data();
    between();
    while (cursor.next(piece)) {
      model_.encode(piece, ids);
      if (static_cast<std::size_t>(piece.data() + piece.size() - batch_start) >= max_bytes) {
        sink(ids);
        ids.clear();
        batch_start = piece.data() + piece.size();
        between();
      }
    }
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
  std::vector<SpecialToken> specials_;
  Pretokenizer pre_;
  BpeModel model_;
  bool keep_gaps_;
  std::string decode_arena_;                   // bytes of every id, specials included
  std::vector<std::uint32_t> decode_offsets_;  // id -> start; vocab_size()+1 entries
  std::vector<bool> used_;                     // ids that are tokens
  int bos_, eos_;
};

}  // namespace wireup::tokenizer
