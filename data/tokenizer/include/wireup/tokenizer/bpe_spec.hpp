#pragma once
#include <string>
#include <utility>
#include <vector>

namespace wireup::tokenizer {

// A token outside the BPE vocabulary (a tokenizer.json's added token): its
// spelling and id. Decoding gives the spelling. A special one (BOS, EOS,
// Llama 3's headers, Qwen's <|im_start|>) is never produced from text: text
// that spells it is encoded as ordinary text (documents cannot inject one);
// chat templates put its id in by name. One not special (Qwen's <think>,
// <tool_call>) is part of the text's vocabulary: wherever text spells it,
// it is that token, as Hugging Face's tokenizers match it.
struct SpecialToken {
  std::string text;
  int id = -1;
  bool special = true;
};

// The normalizer applied to the text between added tokens before it is
// pre-tokenized.
enum class Normalization { None, Nfc };

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
  std::vector<SpecialToken> specials;  // the added tokens, special or not
  Normalization normalization = Normalization::None;
  int bos = -1, eos = -1;
};

}  // namespace wireup::tokenizer
