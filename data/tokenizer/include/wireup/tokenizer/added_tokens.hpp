#pragma once
#include <cstddef>
#include <string_view>
#include <vector>

#include "wireup/tokenizer/bpe_spec.hpp"

namespace wireup::tokenizer {

// Finds the added tokens Hugging Face matches in any text (a tokenizer.json's
// added_tokens not marked special, such as Qwen's <think> and <tool_call>)
// before the text is normalized and pre-tokenized: at each place the
// leftmost occurrence of any of them, the longest of those starting there
// (HF's leftmost-longest match). Pure logic; const and thread-safe.
class AddedTokenSplitter {
 public:
  AddedTokenSplitter() = default;
  // The tokens' texts must not be empty (the parser refuses those).
  explicit AddedTokenSplitter(std::vector<SpecialToken> tokens) : tokens_(std::move(tokens)) {}
  bool empty() const { return tokens_.empty(); }

  // The text in order, as (gap, id) pairs: the text up to the next added
  // token (possibly empty) and that token's id; the last pair is the rest
  // of the text with id -1.
  class Cursor {
   public:
    Cursor(const AddedTokenSplitter& s, std::string_view text);
    // False once the whole text has been handed out.
    bool next(std::string_view& gap, int& id);

   private:
    const AddedTokenSplitter& s_;
    std::string_view text_;
    std::size_t at_ = 0;
    bool done_ = false;
    std::vector<std::size_t> next_;  // each token's next occurrence at or after at_ (npos: none)
  };

 private:
  std::vector<SpecialToken> tokens_;
};

}  // namespace wireup::tokenizer
