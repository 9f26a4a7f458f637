#include "wireup/prep/input_files.hpp"

#include <algorithm>

#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::prep {
namespace fs = std::filesystem;
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool jsonl_name(const fs::path& p) {
  const std::string n = to_lower(p.filename().string());
  for (const char* base : {".jsonl", ".ndjson"})
    for (const char* compressed : {"", ".gz", ".zst"})
      if (ends_with(n, std::string(base) + compressed)) return true;
  return false;
}

InputFile make(const fs::path& p, InputFormat format) {
  std::error_code ec;
  const auto size = fs::file_size(p, ec);
  if (ec) throw InputError("input " + wireup::quoted(p.string()) + ": " + ec.message());
  return {p, size, format == InputFormat::Jsonl || (format == InputFormat::Auto && jsonl_name(p))};
}

bool hidden(const fs::path& p) {
  const auto n = p.filename().string();
  return !n.empty() && n[0] == '.';
}

}  // namespace

std::vector<InputFile> list_inputs(const std::vector<std::string>& args, InputFormat format,
                                   const fs::path& exclude) {
  std::error_code ec;
  const fs::path skip = exclude.empty() ? fs::path() : fs::weakly_canonical(exclude, ec);
  if (args.empty())
    throw InputError("no input files given (expected text or JSONL files or directories)");
  std::vector<InputFile> out;
  for (const auto& arg : args) {
    const fs::path p(arg);
    const auto st = fs::status(p, ec);
    if (!fs::exists(st))
      throw InputError("input " + wireup::quoted(arg) + ": no such file or directory");
    if (fs::is_regular_file(st)) {
      out.push_back(make(p, format));
    } else if (fs::is_directory(st)) {
      std::vector<fs::path> files;
      fs::recursive_directory_iterator it(p, ec), end;
      if (ec)
        throw InputError("input " + wireup::quoted(arg) +
                         ": cannot list directory: " + ec.message());
      for (; it != end; it.increment(ec)) {
        if (ec)
          throw InputError("input " + wireup::quoted(arg) +
                           ": cannot list directory: " + ec.message());
        if (hidden(it->path()) ||
            (!skip.empty() && it->is_directory() && fs::weakly_canonical(it->path(), ec) == skip)) {
          if (it->is_directory()) it.disable_recursion_pending();
          continue;
        }
        if (it->is_regular_file()) files.push_back(it->path());
      }
      std::sort(files.begin(), files.end(),
                [](const fs::path& a, const fs::path& b) { return a.string() < b.string(); });
      if (files.empty())
        throw InputError("input directory " + wireup::quoted(arg) + " holds no files");
      for (const auto& f : files) out.push_back(make(f, format));
    } else {
      throw InputError("input " + wireup::quoted(arg) + ": not a regular file or directory");
    }
  }
  return out;
}

}  // namespace wireup::prep
