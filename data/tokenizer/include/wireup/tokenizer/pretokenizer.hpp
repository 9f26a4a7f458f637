#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace wireup::tokenizer {

// The regex that cuts text into the pieces BPE works on, with PCRE2 (UTF +
// UCP: \s, \p{L}, \p{N} and (?i) are Unicode's; JIT-compiled when PCRE2 has
// a JIT). The PCRE2 headers stay in pretokenizer.cpp. const and thread-safe.
class Pretokenizer {
 public:
  // InputError naming `name` when the pattern does not compile.
  Pretokenizer(const std::string& pattern, const std::string& name);
  Pretokenizer(Pretokenizer&&) noexcept;
  ~Pretokenizer();

  // The pieces of one text, in order: each match, and with `keep_gaps` the
  // text between matches too (else that is dropped, as tiktoken does).
  // The text is checked to be UTF-8 once, by the first next(): InputError
  // "not valid UTF-8 at byte N" otherwise.
  class Cursor {
   public:
    Cursor(const Pretokenizer& p, std::string_view text, bool keep_gaps);
    bool next(std::string_view& piece);

   private:
    const Pretokenizer& p_;
    std::string_view text_;
    std::size_t at_ = 0, match_begin_ = 0, match_end_ = 0;
    bool keep_gaps_, checked_ = false, pending_ = false;
  };

 private:
  // Finds the next match at or after `from`; false when there is none.
  bool find(std::string_view text, std::size_t from, bool check_utf, std::size_t& begin,
            std::size_t& end) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wireup::tokenizer
