#pragma once
#include <string>
#include <string_view>

#include "wireup/tokenizer/bpe_spec.hpp"

namespace wireup::tokenizer {

// True when the content's first non-blank byte is '{' (a JSON object).
bool looks_like_json(std::string_view content);

// A Hugging Face tokenizer.json whose model is byte-level BPE (Llama 3's,
// Qwen2/2.5/3's, GPT-2's): vocabulary and merges from "model" (tokens
// spelled in GPT-2's byte alphabet), no normalizer or NFC (Qwen's), the
// pattern from the pre_tokenizer's Split regex (or GPT-2's when it is a
// ByteLevel with use_regex), the added tokens from "added_tokens" (those
// not "special" are matched in text, see SpecialToken). BOS: the special token the post_processor's
// template puts before the text, else an added token named <|begin_of_text|>, <s>,
// <|startoftext|> or <bos>; EOS: the one it puts after, else one named
// <|end_of_text|>, </s>, <|endoftext|> or <eos> (-1 when none).
// InputError naming `name` and what was expected for anything else (another
// model type, another normalizer, a pre-tokenizer step or an added token's
// option it does not reproduce).
BpeSpec parse_hf_tokenizer_json(std::string_view content, const std::string& name);

}  // namespace wireup::tokenizer
