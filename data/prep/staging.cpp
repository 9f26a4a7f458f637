#include "staging.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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
  // The pid keeps concurrent runs into one directory apart.
  dir_ = output_ / (".wireup-prep." + std::to_string(::getpid()) + ".tmp");
  fs::remove_all(dir_, ec);
  if (!fs::create_directory(dir_, ec) || ec)
    throw InputError("output " + wireup::quoted(output_.string()) + ": cannot create staging directory: " +
                     ec.message());
}

Staging::~Staging() {
  std::error_code ec;
  fs::remove_all(dir_, ec);
  if (created_output_ && !committed_) fs::remove(output_, ec);  // only if empty
}

void Staging::commit(const std::vector<std::string>& names, const std::string& manifest) {
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
