#include "wireup/prep/documents.hpp"

#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/text.hpp"
#include "wireup/tokenizer/utf8.hpp"

namespace wireup::prep {

bool blank(const std::string& s) {
  for (const char c : s)
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '\f' && c != '\v') return false;
  return true;
}

DocumentReader::DocumentReader(const InputFile& file, const DocOptions& options)
    : file_(file), options_(options), lines_(file.path) {}

void DocumentReader::check_utf8(const std::string& s, std::uint64_t line) const {
  if (const auto at = tokenizer::invalid_utf8_at(s))
    throw InputError(file_.path.string() + ":" + std::to_string(line) + ": not valid UTF-8 (byte " +
                     std::to_string(*at + 1) +
                     " of the line); convert it first, e.g. iconv -f latin1 -t utf-8");
}

bool DocumentReader::next(Document& doc) { return file_.jsonl ? next_jsonl(doc) : next_text(doc); }

bool DocumentReader::next_jsonl(Document& doc) {
  while (lines_.next(line_, options_.max_doc_bytes)) {
    if (blank(line_)) continue;
    const auto n = lines_.line_number();
    const std::string where = file_.path.string() + ":" + std::to_string(n);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line_);
    } catch (const nlohmann::json::exception& e) {  // syntax, or a number out of range
      throw InputError(where + ": bad JSON line (" + e.what() +
                       "); expected one JSON object per line");
    }
    const auto it = j.is_object() ? j.find(options_.jsonl_field) : j.end();
    if (!j.is_object() || it == j.end() || !it->is_string())
      throw InputError(where + ": expected a JSON object with a string field " +
                       wireup::quoted(options_.jsonl_field) +
                       " (choose the field with --jsonl-field)");
    doc.text = it->get<std::string>();
    doc.line = n;
    check_utf8(doc.text, n);
    if (!blank(doc.text)) return true;
  }
  return false;
}

bool DocumentReader::next_row(Document& row) {
  while (lines_.next(line_, options_.max_doc_bytes)) {
    if (blank(line_)) continue;
    row.line = lines_.line_number();
    row.text.swap(line_);
    return true;
  }
  return false;
}

bool DocumentReader::ends_document(const std::string& line) const {
  if (options_.separator) return line == *options_.separator;
  if (options_.text_docs == TextDocs::Paragraph) return blank(line);
  return false;
}

bool DocumentReader::next_text(Document& doc) {
  while (!done_) {
    doc.text.clear();
    doc.line = 0;
    bool any = false;
    for (;;) {
      if (!lines_.next(line_, options_.max_doc_bytes)) {
        done_ = true;
        break;
      }
      const auto n = lines_.line_number();
      if (ends_document(line_)) break;
      check_utf8(line_, n);
      if (any)
        doc.text += '\n';
      else
        doc.line = n;
      if (doc.text.size() + line_.size() > options_.max_doc_bytes)
        throw InputError(file_.path.string() + ":" + std::to_string(doc.line) +
                         ": a document longer than " + std::to_string(options_.max_doc_bytes) +
                         " bytes (--max-doc-bytes); split it (e.g. --text-docs paragraph or "
                         "line) or raise --max-doc-bytes");
      doc.text += line_;
      any = true;
      if (!options_.separator && options_.text_docs == TextDocs::Line) break;
    }
    if (any && !blank(doc.text)) return true;
  }
  return false;
}

}  // namespace wireup::prep
