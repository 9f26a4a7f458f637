#pragma once
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace wireup::prep {

// All output is written into a hidden directory inside the output directory
// and renamed into place only when complete, manifest.json last: readers
// never see a half-written shard under its final name, and a failed run
// leaves nothing (the destructor removes the staging directory). Staging
// directories of runs killed outright (SIGKILL, power loss) are removed by
// the next run into the same output, once no process has their pid.
class Staging {
 public:
  // Creates `output` if needed (and removes it again on failure). Refuses an
  // output that already holds a manifest.json unless `force`.
  Staging(std::filesystem::path output, bool force);
  ~Staging();
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;

  std::filesystem::path file(const std::string& name) const { return dir_ / name; }

  // fsyncs `names` and `manifest`, retires an old data set (with force:
  // its manifest first, then the files it listed), renames `names` into the
  // output, then the manifest, and fsyncs the directory.
  void commit(const std::vector<std::string>& names, const std::string& manifest);

  // Removes the staging directory (and the output, when this run created
  // it) now, from any thread, unless commit() has run: then false. Waits for
  // a commit() in progress. For a stop that cannot wait for the unwinding.
  bool abandon();

 private:
  std::filesystem::path output_;
  std::filesystem::path dir_;
  bool created_output_ = false;  // removed again (when empty) if never committed
  bool committed_ = false;
  std::mutex mu_;  // commit() and abandon() one at a time
};

}  // namespace wireup::prep
