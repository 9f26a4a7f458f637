#include "staging.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "wireup/data/manifest.hpp"
#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::prep {
namespace fs = std::filesystem;
namespace {

void fsync_path(const fs::path& p, bool directory) {
  const int fd = ::open(p.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw InputError(p.string() + ": cannot open to sync: " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) throw InputError(p.string() + ": fsync failed: " + std::strerror(err));
}

// .wireup-prep.PID.tmp directories whose process is gone.
void remove_stale_staging(const fs::path& output) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(output, ec)) {
    const std::string name = entry.path().filename().string();
    constexpr std::string_view kPrefix = ".wireup-prep.", kSuffix = ".tmp";
    if (name.size() <= kPrefix.size() + kSuffix.size() || !name.starts_with(kPrefix) ||
        !name.ends_with(kSuffix))
      continue;
    const auto pid =
        wireup::parse_uint(std::string_view(name).substr(
                               kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size()),
                           INT32_MAX);
    if (!pid || *pid == 0) continue;
    if (::kill(static_cast<pid_t>(*pid), 0) == 0 || errno != ESRCH) continue;  // alive, or unknown
    std::error_code rm;
    fs::remove_all(entry.path(), rm);
  }
}

}  // namespace

Staging::Staging(fs::path output, bool force) : output_(std::move(output)) {
  std::error_code ec;
  if (fs::exists(output_ / data::kManifestName, ec) && !force)
    throw InputError("output " + wireup::quoted(output_.string()) +
                     " already holds a prepared data set (manifest.json); pass --force to "
                     "replace it or choose another directory");
  created_output_ = !fs::exists(output_, ec);
  fs::create_directories(output_, ec);
  if (ec || !fs::is_directory(output_))
    throw InputError("output " + wireup::quoted(output_.string()) + ": cannot create directory" +
                     (ec ? ": " + ec.message() : std::string()));
  remove_stale_staging(output_);
  // The pid keeps concurrent runs into one directory apart.
  dir_ = output_ / (".wireup-prep." + std::to_string(::getpid()) + ".tmp");
  fs::remove_all(dir_, ec);
  if (!fs::create_directory(dir_, ec) || ec)
    throw InputError("output " + wireup::quoted(output_.string()) +
                     ": cannot create staging directory: " + ec.message());
}

Staging::~Staging() {
  const std::lock_guard lock(mu_);
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (created_output_ && !committed_) fs::remove(output_, ec);  // only if empty
}

bool Staging::abandon() {
  const std::lock_guard lock(mu_);
  if (committed_) return false;
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (created_output_) fs::remove(output_, ec);  // only if empty
  return true;
}

void Staging::commit(const std::vector<std::string>& names, const std::string& manifest) {
  const std::lock_guard lock(mu_);
  for (const auto& n : names) fsync_path(file(n), false);
  fsync_path(file(manifest), false);
  const auto old_manifest = output_ / data::kManifestName;
  std::error_code ec;
  if (fs::exists(old_manifest, ec)) {
    std::vector<std::string> old_files;
    try {
      const auto old = data::load_manifest(old_manifest);
      old_files.push_back(old.tokenizer.file);
      for (const auto* split : {&old.train, &old.validation})
        for (const auto& s : split->shards) old_files.push_back(s.file);
    } catch (const InputError&) {
      // An unreadable old manifest: its files get overwritten or stay.
    }
    if (!fs::remove(old_manifest, ec) || ec)
      throw InputError(old_manifest.string() + ": cannot remove the old manifest: " + ec.message());
    for (const auto& f : old_files) fs::remove(output_ / f, ec);
  }
  for (const auto& n : names) {
    fs::rename(file(n), output_ / n, ec);
    if (ec) throw InputError((output_ / n).string() + ": cannot move into place: " + ec.message());
  }
  fs::rename(file(manifest), output_ / manifest, ec);
  if (ec)
    throw InputError((output_ / manifest).string() + ": cannot move into place: " + ec.message());
  fsync_path(output_, true);
  committed_ = true;
}

}  // namespace wireup::prep
