#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wireup/tokenizer/bpe_spec.hpp"

namespace wireup::tokenizer {

// A tiktoken file holds only the ranks: the pre-tokenizer pattern and the
// special tokens belong to the model. These are the ones wireup-prep knows,
// recognised by the file's SHA-256.
struct KnownVocabulary {
  std::string_view name;    // "Llama 3", "cl100k_base"
  std::string_view sha256;  // of the tiktoken file
  std::size_t ranks = 0;    // its number of tokens
  std::string_view pattern;
  std::vector<SpecialToken> specials;
  int bos = -1, eos = -1;
};

const std::vector<KnownVocabulary>& known_vocabularies();

// The known vocabulary whose file has this SHA-256, if any.
const KnownVocabulary* find_known_vocabulary(std::string_view sha256_hex);

// Llama 3's pre-tokenizer pattern (also cl100k_base's).
inline constexpr std::string_view kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Qwen2, 2.5 and 3's (their tokenizer.json's Split regex): Llama 3's with
// one digit a piece.
inline constexpr std::string_view kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// GPT-2's (a Hugging Face ByteLevel pre-tokenizer with use_regex).
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// The pre-tokenizer patterns a tokenizer.json's Split may use, by name:
// those whose pieces are tested to be Hugging Face's (its regex engine is
// Oniguruma, wireup-prep's PCRE2; these patterns cut text alike in both).
struct KnownPattern {
  std::string_view name;  // "Llama 3", "Qwen2"
  std::string_view pattern;
};
const std::vector<KnownPattern>& known_patterns();
// The known pattern spelled exactly `regex`, if any.
const KnownPattern* find_known_pattern(std::string_view regex);

}  // namespace wireup::tokenizer
