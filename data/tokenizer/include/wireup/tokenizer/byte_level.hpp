#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace wireup::tokenizer {

// GPT-2's byte <-> unicode map, in which Hugging Face byte-level BPE
// vocabularies (tokenizer.json of GPT-2, Llama 3, ...) spell their tokens:
// the printable bytes ! .. ~, ¡ .. ¬ and ® .. ÿ stand for themselves (as
// code points), the other 68 bytes, in byte order, for U+0100, U+0101, ...
// (space is U+0120 'Ġ', newline U+010A 'Ċ').

// The UTF-8 spelling of `bytes` in that alphabet.
std::string bytes_to_unicode(std::string_view bytes);

// The bytes a token spelled in that alphabet stands for; nullopt when it
// is not valid UTF-8 or holds a character outside the 256 of the map.
std::optional<std::string> unicode_to_bytes(std::string_view text);

}  // namespace wireup::tokenizer
