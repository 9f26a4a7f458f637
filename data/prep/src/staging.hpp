#pragma once
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "wireup/file_io.hpp"

namespace wireup::prep {

// A run's output, staged: all files are written into a hidden directory
// inside the output directory (OUTPUT/.wireup-prep.PID.tmp, a
// wireup::io::StagingDir) and renamed into place only when complete,
// manifest.json last: readers never see a half-written shard under its final
// name, and a failed run leaves nothing (the destructor removes the staging
// directory). Staging directories of runs killed outright (SIGKILL, power
// loss) are removed by the next run into the same output, once no process
// has their pid.
class Staging {
 public:
  // Creates `output` if needed (and removes it again on failure). Refuses an
  // output that already holds a manifest.json unless `force`.
  Staging(std::filesystem::path output, bool force);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  std::filesystem::path file(const std::string& name) const { return dir_->file(name); }

  // Retires an old data set (with force: its manifest first, then the files
  // it listed), moves `names` into the output, then the manifest, each step
  // fsynced (files, then the directory).
  void commit(const std::vector<std::string>& names, const std::string& manifest);

  // Removes the staging directory (and the output, when this run created
  // it) now, from any thread, unless commit() has run: then false. Waits for
  // a commit() in progress. For a stop that cannot wait for the unwinding.
  bool abandon();

 private:
  void retire_old_dataset();

  std::filesystem::path output_;
  bool created_output_ = false;  // removed again (when empty) if never committed
  std::optional<io::StagingDir> dir_;
  bool committed_ = false;
  std::mutex mu_;  // commit() and abandon() one at a time
};

}  // namespace wireup::prep
