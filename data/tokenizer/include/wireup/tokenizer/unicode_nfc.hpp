#pragma once
#include <string>
#include <string_view>

namespace wireup::tokenizer {

// Unicode Normalization Form C (canonical decomposition, then canonical
// composition), as a Hugging Face tokenizer.json's {"type": "NFC"}
// normalizer applies it (Qwen2, 2.5 and 3): "e" + U+0301 becomes "é", Hangul
// jamo L V T become their syllable. A thin adapter over ICU (Debian's
// libicu); the ICU headers stay in unicode_nfc.cpp.

// `text` (valid UTF-8, checked by the caller) in NFC. Returns `text` itself
// when it already is NFC (the usual case: no copy), else the normalized copy
// put in `storage`. InputError for a text over 2^31-1 bytes (ICU's
// limit), std::runtime_error when ICU fails.
std::string_view to_nfc(std::string_view text, std::string& storage);

}  // namespace wireup::tokenizer
