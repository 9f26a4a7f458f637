#include "wireup/tokenizer/text_pieces.hpp"

namespace wireup::tokenizer {

std::size_t piece_end(std::string_view text, std::size_t begin, std::size_t max_bytes,
                      bool& at_word) {
  at_word = true;
  if (max_bytes < 4) max_bytes = 4;  // room for one UTF-8 character
  if (text.size() - begin <= max_bytes) return text.size();
  const std::size_t limit = begin + max_bytes;  // < text.size()
  for (std::size_t end = limit; end > begin + max_bytes / 2; --end)
    if (text[end] == ' ' && text[end - 1] != ' ') return end;
  at_word = false;
  std::size_t end = limit;
  // Back off UTF-8 continuation bytes (10xxxxxx): never cut inside a character.
  while (end > begin + 1 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return end;
}

}  // namespace wireup::tokenizer
