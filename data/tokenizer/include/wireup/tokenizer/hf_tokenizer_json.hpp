#pragma once
#include <string>
#include <string_view>

#include "wireup/tokenizer/bpe_spec.hpp"

namespace wireup::tokenizer {

// True when the content's first non-blank byte is '{' (a JSON object).
bool looks_like_json(std::string_view content);

// A Hugging Face tokenizer.json whose model is byte-level BPE (Llama 3's,
// GPT-2's): vocabulary and merges from "model" (tokens spelled in GPT-2's
// byte alphabet), the pattern from the pre_tokenizer's Split regex (or
// GPT-2's when it is a ByteLevel with use_regex), special tokens from
// "added_tokens". BOS: the special token the post_processor's template puts
// before the text, else an added token named <|begin_of_text|>, <s>,
// <|startoftext|> or <bos>; EOS: the one it puts after, else one named
// <|end_of_text|>, </s>, <|endoftext|> or <eos> (-1 when none).
// InputError naming `name` and what was expected for anything else (another
// model type, a normalizer, a pre-tokenizer it does not reproduce).
BpeSpec parse_hf_tokenizer_json(std::string_view content, const std::string& name);

}  // namespace wireup::tokenizer
