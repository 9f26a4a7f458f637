#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "wireup/prep/input_files.hpp"
#include "wireup/prep/line_reader.hpp"

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
  // JSONL: the next non-blank line as it stands (doc.text) and its number,
  // for readers of other row shapes (chat conversations); no field is read.
  bool next_row(Document& row);
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

}  // namespace wireup::prep
