#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "input_files.hpp"
#include "line_reader.hpp"

namespace wireup::prep {

// How a text file splits into documents (JSONL: one object per line).
enum class TextDocs {
  File,       // the whole file is one document
  Paragraph,  // blank lines separate documents
  Line,       // every line is a document
};

struct DocOptions {
  TextDocs text_docs = TextDocs::File;
  std::optional<std::string> separator;  // a line equal to this separates documents
  std::string jsonl_field = "text";
  // Longest document (and line) accepted: memory holds one document whole.
  std::uint64_t max_doc_bytes = std::uint64_t{256} << 20;
};

struct Document {
  std::string text;        // lines joined by "\n", UTF-8 checked
  std::uint64_t line = 0;  // where it starts, for messages
};

// Documents of one input file. Documents that are empty or only whitespace
// are skipped. Errors (bad JSON, missing field, invalid UTF-8) name
// file:line.
class DocumentReader {
 public:
  DocumentReader(const InputFile& file, const DocOptions& options);
  bool next(Document& doc);
  std::uint64_t raw_offset() const { return lines_.raw_offset(); }

 private:
  bool next_jsonl(Document& doc);
  bool next_text(Document& doc);
  bool ends_document(const std::string& line) const;
  void check_utf8(const std::string& s, std::uint64_t line) const;

  InputFile file_;
  DocOptions options_;
  LineReader lines_;
  std::string line_;
  bool done_ = false;
};

bool blank(const std::string& s);
// Length of the valid UTF-8 sequence at p[0..n) (n >= 1), 0 when there is none:
// no overlong forms, no UTF-16 surrogates, nothing above U+10FFFF.
std::size_t utf8_sequence_length(const unsigned char* p, std::size_t n);
// Byte offset of the first invalid UTF-8 sequence, or nullopt.
std::optional<std::size_t> invalid_utf8_at(const std::string& s);

}  // namespace wireup::prep
