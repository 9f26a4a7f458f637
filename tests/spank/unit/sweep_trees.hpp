#pragma once
// Snapshot trees for the job epilog sweep's tests, as wireup-train leaves them.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "wireup/memory_snapshot_owner.hpp"

namespace wireup::test {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "wireup-sweep.XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
    // Sticky, like /dev/shm: the sweep refuses a parent that is neither that nor root's.
    REQUIRE(::chmod(tmpl.c_str(), 01777) == 0);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

inline void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// PARENT/wireup-JOB as wireup-train leaves it: two nodes, a snapshot each, a marker.
inline fs::path make_tree(const fs::path& parent, const std::string& job,
                          const std::string& marker_job) {
  const fs::path root = parent / wireup::snapshot_dir_name_for_job(job);
  for (const char* node : {"n0", "n1"}) {
    fs::create_directories(root / node / "snap-00000004");
    write(root / node / "snap-00000004" / "rank-00000.bin", std::string(1000, 'x'));
    write(root / node / "snap-00000004" / "complete", "");
  }
  write(root / std::string(wireup::kSnapshotOwnerFile),
        wireup::snapshot_owner_text(marker_job, ::getuid()));
  return root;
}

}  // namespace wireup::test
