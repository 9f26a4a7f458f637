#include "prep_fixtures.hpp"

#include <fstream>

#include "wireup/prep/documents.hpp"

namespace wireup::test {

std::vector<std::string> paragraphs(const std::filesystem::path& file) {
  std::vector<std::string> out;
  prep::DocOptions o;
  o.text_docs = prep::TextDocs::Paragraph;
  prep::DocumentReader r({file, 0, false}, o);
  prep::Document d;
  while (r.next(d)) out.push_back(d.text);
  return out;
}

void write_rows(const std::filesystem::path& file, const std::vector<std::string>& rows) {
  std::ofstream out(file);
  for (const auto& r : rows) out << r << "\n";
}

}  // namespace wireup::test
