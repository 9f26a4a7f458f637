#include "wireup/run_dir_rules.hpp"

#include <sys/stat.h>

namespace wireup {

std::string temp_base(const std::optional<std::string>& tmpdir) {
  return tmpdir && !tmpdir->empty() ? *tmpdir : "/tmp";
}

std::string run_dir_template(const std::string& base, uid_t uid) {
  std::string b = base;
  while (b.size() > 1 && b.back() == '/') b.pop_back();
  return b + (b == "/" ? "" : "/") + "wireup-launch-" + std::to_string(uid) + ".XXXXXX";
}

std::optional<std::string> temp_base_problem(const std::string& base, mode_t mode) {
  if (!S_ISDIR(mode)) return base + " is not a directory";
  if ((mode & (S_IWGRP | S_IWOTH)) != 0 && (mode & S_ISVTX) == 0)
    return base + " is writable by other users and not sticky (chmod +t, as /tmp is)";
  return std::nullopt;
}

}  // namespace wireup
