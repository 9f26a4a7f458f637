#pragma once
#include <cstddef>
#include <string_view>

namespace wireup::tokenizer {

// Where a long document's next piece ends, for tokenizing it a piece at a
// time: SentencePiece's working memory grows with the text it is given
// (about a hundred bytes per byte for BPE), so a document of hundreds of MB
// in one call exhausts memory.
//
// A piece ends, by preference, just before a run of spaces that follows
// another character: with SentencePiece's default split_by_whitespace a word
// starts there, no piece of the vocabulary spans it, and encoding the two
// sides apart gives the ids of encoding them together (the tokenizer handles
// the leading space, see Tokenizer::encode_pieces). The cut is the last such
// place in (begin + max_bytes / 2, begin + max_bytes]. Text without one there
// (no spaces: code, base64, most CJK text) is cut at the last UTF-8
// character boundary at or before begin + max_bytes, and `at_word` is false:
// the ids next to that cut may differ from whole-text encoding, no text is
// lost. Returns text.size() when the rest fits.
std::size_t piece_end(std::string_view text, std::size_t begin, std::size_t max_bytes,
                      bool& at_word);

}  // namespace wireup::tokenizer
