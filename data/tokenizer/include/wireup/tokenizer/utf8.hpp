#pragma once
#include "wireup/utf8.hpp"

// The tokenizers' UTF-8 checks are wireup_core's (wireup/utf8.hpp), which the
// escaping of logged text shares.
namespace wireup::tokenizer {

using ::wireup::invalid_utf8_at;
using ::wireup::utf8_sequence_length;

}  // namespace wireup::tokenizer
