#include "staging.hpp"

#include "wireup/data/manifest.hpp"
#include "wireup/error.hpp"
#include "wireup/text.hpp"

namespace wireup::prep {
namespace fs = std::filesystem;

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
  dir_.emplace(output_, "wireup-prep");
}

Staging::~Staging() {
  const std::lock_guard lock(mu_);
  dir_->remove();
  std::error_code ec;
  if (created_output_ && !committed_) fs::remove(output_, ec);  // only if empty
}

bool Staging::abandon() {
  const std::lock_guard lock(mu_);
  if (committed_) return false;
  dir_->remove();
  std::error_code ec;
  if (created_output_) fs::remove(output_, ec);  // only if empty
  return true;
}

// The old manifest goes first, so no reader ever sees it list a file that is
// gone; an unreadable one leaves its files to be overwritten or to stay.
void Staging::retire_old_dataset() {
  const auto old_manifest = output_ / data::kManifestName;
  std::error_code ec;
  if (!fs::exists(old_manifest, ec)) return;
  std::vector<std::string> old_files;
  try {
    const auto old = data::load_manifest(old_manifest);
    old_files.push_back(old.tokenizer.file);
    for (const auto* split : {&old.train, &old.validation})
      for (const auto& s : split->shards) old_files.push_back(s.file);
  } catch (const InputError&) {
  }
  if (!fs::remove(old_manifest, ec) || ec)
    throw InputError(old_manifest.string() + ": cannot remove the old manifest: " + ec.message());
  for (const auto& f : old_files) fs::remove(output_ / f, ec);
}

void Staging::commit(const std::vector<std::string>& names, const std::string& manifest) {
  const std::lock_guard lock(mu_);
  for (const auto& n : names) io::fsync_path(file(n));
  io::fsync_path(file(manifest));
  retire_old_dataset();
  dir_->move_into_output(names);
  dir_->move_into_output({manifest});
  committed_ = true;
}

}  // namespace wireup::prep
