#include "agent/run_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "wireup/run_dir_rules.hpp"

namespace wireup {

std::filesystem::path make_private_run_dir() {
  const char* env = std::getenv("TMPDIR");
  const std::string base = temp_base(env ? std::optional<std::string>(env) : std::nullopt);
  const std::string hint = " (set TMPDIR to a private directory, or pass --log-dir)";
  struct stat st {};
  if (stat(base.c_str(), &st) != 0)
    throw std::runtime_error("run directory: cannot use " + base + ": " + std::strerror(errno) +
                             hint);
  if (auto why = temp_base_problem(base, st.st_mode))
    throw std::runtime_error("run directory: " + *why + hint);
  std::string tmpl = run_dir_template(base, getuid());
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    throw std::runtime_error("run directory: cannot create " + tmpl + ": " + std::strerror(errno) +
                             hint);
  return std::filesystem::path(buf.data());
}

}  // namespace wireup
