#include "wireup/plugstack_conf.hpp"

#include "wireup/error.hpp"

namespace wireup {
namespace {

std::vector<std::string> words(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    const auto start = line.find_first_not_of(" \t\n", i);
    if (start == std::string_view::npos) break;
    auto end = line.find_first_of(" \t\n", start);
    if (end == std::string_view::npos) end = line.size();
    out.emplace_back(line.substr(start, end - start));
    i = end;
  }
  return out;
}

}  // namespace

std::vector<std::string> wireup_args_in_plugstack(std::string_view text, const std::string& path) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError(path + ": NUL byte at offset " + std::to_string(nul) +
                     "; plugstack.conf must be a text file");
  if (text.size() > kPlugstackBytesMax)
    throw InputError(path + ": larger than " + std::to_string(kPlugstackBytesMax) +
                     " bytes; a plugstack.conf is a few short lines (is this the right file?)");
  std::size_t line_no = 0;
  std::vector<std::string> found;
  bool have = false;
  for (std::size_t pos = 0; pos < text.size();) {
    ++line_no;
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (line.size() > kPlugstackLineMax)
      throw InputError(path + ": line " + std::to_string(line_no) + " is longer than " +
                       std::to_string(kPlugstackLineMax) +
                       " bytes (Slurm reads plugstack.conf lines into a 4096-byte buffer)");
    if (have) continue;  // keep checking the rest: Slurm reads it all
    line = line.substr(0, line.find('#'));
    const auto w = words(line);
    if (w.size() < 2 || (w[0] != "required" && w[0] != "optional")) continue;
    if (!w[1].ends_with("spank_wireup.so")) continue;
    found.assign(w.begin() + 2, w.end());
    have = true;  // Slurm refuses to load a plugin twice: the first line counts
  }
  if (!have) throw InputError(path + ": no line loads spank_wireup.so");
  return found;
}

}  // namespace wireup
