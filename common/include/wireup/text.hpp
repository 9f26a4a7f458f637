#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

std::string to_lower(std::string_view s);
std::string to_upper(std::string_view s);
std::string_view trim(std::string_view s);
std::vector<std::string> split(std::string_view s, char sep);

// Decimal digits only (no sign, no spaces); nullopt on overflow of `max`.
std::optional<std::uint64_t> parse_uint(std::string_view s, std::uint64_t max = UINT64_MAX);

// Quoted for messages: control characters shown as \xNN.
std::string quoted(std::string_view s);

// `text` on one line, every byte accounted for (wireup-prep inspect's documents, the
// names the plugin's job epilog logs): backslash and double quote as \\ and \",
// newline, tab and carriage return as \n \t \r, other C0 controls, DEL and bytes
// that are not UTF-8 as \xNN, and C1 controls, line/paragraph separators and
// bidirectional controls (which reorder a terminal's line) as \uNNNN.
std::string escape_text(std::string_view text);

}  // namespace wireup
