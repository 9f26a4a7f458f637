#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wireup::tokenizer {

// A tiktoken BPE file (OpenAI's *.tiktoken, Meta's Llama 3 tokenizer.model):
// one line per token, `base64(token bytes) rank`, ranks 0, 1, 2, ... The
// rank is the token's id and its merge priority (lower merges first).

// True when the content's first line has that shape (the kind of file is
// told from its bytes, not its name).
bool looks_like_tiktoken(std::string_view content);

// The tokens' bytes, indexed by rank. InputError naming `name` and the line
// on a malformed line, bad base64, a duplicate token, or ranks that are not
// exactly 0 .. n-1.
std::vector<std::string> parse_tiktoken(std::string_view content, const std::string& name);

// Standard base64 (RFC 4648, '=' padding required); nullopt when malformed.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace wireup::tokenizer
