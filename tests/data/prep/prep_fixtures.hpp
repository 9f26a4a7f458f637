#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace wireup::test {

// The documents wireup-prep reads from a text file in paragraph mode (--text-docs paragraph).
std::vector<std::string> paragraphs(const std::filesystem::path& file);

// A JSONL file of `rows`, one a line.
void write_rows(const std::filesystem::path& file, const std::vector<std::string>& rows);

}  // namespace wireup::test
