#include "wireup/tokenizer/added_tokens.hpp"

namespace wireup::tokenizer {

AddedTokenSplitter::Cursor::Cursor(const AddedTokenSplitter& s, std::string_view text)
    : s_(s), text_(text), next_(s.tokens_.size(), 0) {
  for (std::size_t i = 0; i < next_.size(); ++i) next_[i] = text_.find(s_.tokens_[i].text);
}

bool AddedTokenSplitter::Cursor::next(std::string_view& gap, int& id) {
  if (done_) return false;
  constexpr auto npos = std::string_view::npos;
  std::size_t best = npos, best_len = 0;
  id = -1;
  for (std::size_t i = 0; i < next_.size(); ++i) {
    const auto& token = s_.tokens_[i];
    if (next_[i] != npos && next_[i] < at_) next_[i] = text_.find(token.text, at_);
    if (next_[i] == npos) continue;
    if (next_[i] < best || (next_[i] == best && token.text.size() > best_len)) {
      best = next_[i];
      best_len = token.text.size();
      id = token.id;
    }
  }
  if (best == npos) {
    gap = text_.substr(at_);
    done_ = true;
    return true;
  }
  gap = text_.substr(at_, best - at_);
  at_ = best + best_len;
  return true;
}

}  // namespace wireup::tokenizer
