#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace wireup::prep {

enum class InputFormat { Auto, Text, Jsonl };

struct InputFile {
  std::filesystem::path path;
  std::uint64_t bytes = 0;  // on disk (compressed size for .gz, .zst)
  bool jsonl = false;
};

// Expands the command-line inputs: a file is taken as is; a directory
// contributes its regular files recursively, in byte order of their paths
// and skipping names that start with '.', so the order (and the output) does
// not depend on the file system. Auto picks JSONL for *.jsonl, *.ndjson and
// their .gz and .zst; anything else is text. Directories skip `exclude` (the output
// directory, when it lies inside an input). Throws InputError naming a
// missing input.
std::vector<InputFile> list_inputs(const std::vector<std::string>& args, InputFormat format,
                                   const std::filesystem::path& exclude = {});

}  // namespace wireup::prep
