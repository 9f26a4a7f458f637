#include "wireup/plugstack_conf.hpp"

#include <cctype>

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

// The bounds Slurm's reader implies: no NUL, no line over kPlugstackLineMax,
// no more than kPlugstackBytesMax bytes.
void check_bounds(std::string_view text, const std::string& path) {
  if (const auto nul = text.find('\0'); nul != std::string_view::npos)
    throw InputError(path + ": NUL byte at offset " + std::to_string(nul) +
                     "; plugstack.conf must be a text file");
  if (text.size() > kPlugstackBytesMax)
    throw InputError(path + ": larger than " + std::to_string(kPlugstackBytesMax) +
                     " bytes; a plugstack.conf is a few short lines (is this the right file?)");
  std::size_t line_no = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    ++line_no;
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    if (eol - pos > kPlugstackLineMax)
      throw InputError(path + ": line " + std::to_string(line_no) + " is longer than " +
                       std::to_string(kPlugstackLineMax) +
                       " bytes (Slurm reads plugstack.conf lines into a 4096-byte buffer)");
    pos = eol + 1;
  }
}

// Each line's words, comments cut; element i is line i + 1.
std::vector<std::vector<std::string>> lines_of(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  for (std::size_t pos = 0; pos < text.size();) {
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    out.push_back(words(line.substr(0, line.find('#'))));
    pos = eol + 1;
  }
  return out;
}

bool loads(const std::vector<std::string>& w) {
  return w.size() >= 2 && (w[0] == "required" || w[0] == "optional");
}

bool loads_wireup(const std::vector<std::string>& w) {
  return loads(w) && w[1].ends_with("spank_wireup.so");
}

std::string base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string dir_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

std::string joined(const std::vector<std::string>& w) {
  std::string out;
  for (const auto& s : w) out += (out.empty() ? "" : " ") + s;
  return out;
}

// An include line whose pattern names pyxis, or one of whose files loads it.
bool includes_container(const std::vector<std::string>& w, const std::string& path,
                        const IncludeReader& included) {
  if (w.size() < 2 || w[0] != "include") return false;
  if (base_name(w[1]).find("pyxis") != std::string::npos) return true;
  const std::string pattern = w[1].starts_with('/') ? w[1] : dir_name(path) + "/" + w[1];
  for (const auto& text : included(pattern))
    for (const auto& iw : lines_of(text))
      if (loads(iw) && is_container_plugin(iw[1])) return true;
  return false;
}

}  // namespace

std::vector<std::string> wireup_args_in_plugstack(std::string_view text, const std::string& path) {
  check_bounds(text, path);
  // Slurm refuses to load a plugin twice: the first line counts.
  for (const auto& w : lines_of(text))
    if (loads_wireup(w)) return {w.begin() + 2, w.end()};
  throw InputError(path + ": no line loads spank_wireup.so");
}

bool is_container_plugin(std::string_view path) {
  return base_name(path).find("pyxis") != std::string::npos;
}

std::optional<ContainerAfterWireup> container_after_wireup(std::string_view text,
                                                           const std::string& path,
                                                           const IncludeReader& included) {
  check_bounds(text, path);
  const auto lines = lines_of(text);
  std::size_t ours = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& w = lines[i];
    if (ours == 0) {
      if (loads_wireup(w)) ours = i + 1;
      continue;
    }
    if ((loads(w) && is_container_plugin(w[1])) || includes_container(w, path, included))
      return ContainerAfterWireup{ours, i + 1, joined(w)};
  }
  return std::nullopt;
}

std::string order_warning(const ContainerAfterWireup& c, const std::string& path) {
  return "warning: " + path + " loads spank_wireup.so (line " + std::to_string(c.wireup_line) +
         ") before the container plugin pyxis (line " + std::to_string(c.container_line) + ": " +
         c.text +
         "). In a step with --container-image, pyxis's task_init runs after wireup's: it "
         "imports the image's environment over what wireup set (admin forceenv, --wireup-* "
         "options, MASTER_ADDR/MASTER_PORT and the rest where the image or enroot's PyTorch "
         "hook defines them) and wireup reads the node's aws-ofi-nccl, not the container's, so "
         "the values below may not be the task's. Fix: list spank_wireup.so after pyxis "
         "(lifecycle/on_create.sh places it there)";
}

std::string plugstack_path_for(std::string_view slurm_conf_text, const std::string& slurm_conf) {
  std::string value;
  for (std::size_t pos = 0; pos < slurm_conf_text.size();) {
    auto eol = slurm_conf_text.find('\n', pos);
    if (eol == std::string_view::npos) eol = slurm_conf_text.size();
    std::string_view line = slurm_conf_text.substr(pos, eol - pos);
    pos = eol + 1;
    line = line.substr(0, line.find('#'));
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const auto key = words(line.substr(0, eq));
    if (key.size() != 1) continue;
    std::string k = key[0];
    for (auto& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const auto v = words(line.substr(eq + 1));
    if (k == "plugstackconfig" && !v.empty()) value = v[0];  // the last one counts
  }
  if (value.empty()) return dir_name(slurm_conf) + "/plugstack.conf";
  return value.starts_with('/') ? value : dir_name(slurm_conf) + "/" + value;
}

}  // namespace wireup
