#pragma once
#include <string>
#include <utility>
#include <vector>

namespace wireup::tokenizer {

// A special token: its spelling and id. Decoding gives the spelling; text
// that contains the spelling is encoded as ordinary text (documents cannot
// inject a BOS or EOS).
struct SpecialToken {
  std::string text;
  int id = -1;
};

// Everything a byte-level BPE tokenizer is made of, whichever file it came
// from (a tiktoken file plus a known vocabulary's pattern and specials, or a
// Hugging Face tokenizer.json).
struct BpeSpec {
  std::string pattern;              // the pre-tokenizer regex (PCRE2 syntax, UTF + UCP)
  bool keep_gaps = false;           // text between matches is a piece too (HF Split);
                                    // tiktoken drops it (none with the known patterns)
  bool ignore_merges = true;        // a piece that is a token is that token, unmerged
  std::vector<std::string> tokens;  // bytes by id; ids with "" are unused
  // Empty: tiktoken's rule, any two adjacent parts whose bytes together are
  // a token merge, lowest id first. Else HF's: only these pairs (as bytes),
  // in this order of priority.
  std::vector<std::pair<std::string, std::string>> merges;
  std::vector<SpecialToken> specials;
  int bos = -1, eos = -1;
};

}  // namespace wireup::tokenizer
