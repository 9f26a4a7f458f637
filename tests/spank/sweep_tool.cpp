// wireup_sweep_tool: the job epilog's sweep outside slurmd, for tests/spank/sweep_trees.sh.
//   wireup_sweep_tool PARENT JOB UID [--trace] [--chase=SUB] [KEY=VALUE...]
// KEY=VALUE: plugstack.conf arguments (memory_snapshot_max_*). Prints the line the
// epilog logs, then its counts and this process's peak memory; with --trace, each
// directory entered ("enter DEV INO") first. --chase=SUB: the rename race at its
// worst: each time the walk enters a directory D right under the job's, the
// directory SUB (relative to the job's) is renamed to D/BASENAME first, so that the
// walk finds it again in every directory it goes into.
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "snapshot_sweep.hpp"
#include "wireup/settings.hpp"
#include "wireup/text.hpp"

namespace {

// --chase: the directories right under the job's, by inode, and where SUB is now.
struct Chase {
  std::map<std::uint64_t, std::string> dirs;
  std::string at, base;

  Chase(const std::string& job_dir, const std::string& sub) : at(job_dir + "/" + sub) {
    base = std::filesystem::path(sub).filename().string();
    for (const auto& e : std::filesystem::directory_iterator(job_dir))
      if (e.is_directory() && !e.is_symlink()) {
        struct stat st {};
        if (::stat(e.path().c_str(), &st) == 0) dirs[st.st_ino] = e.path().string();
      }
  }
  void entered(std::uint64_t ino) {
    const auto d = dirs.find(ino);
    if (d == dirs.end() || at.rfind(d->second + "/", 0) == 0) return;
    const std::string to = d->second + "/" + base;
    if (std::rename(at.c_str(), to.c_str()) == 0) at = to;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: wireup_sweep_tool PARENT JOB UID [--trace] [KEY=VALUE...]\n");
    return 2;
  }
  try {
    const auto uid = wireup::parse_uint(argv[3], 0xFFFFFFFEu);
    if (!uid) throw std::invalid_argument(std::string("UID: not a number: ") + argv[3]);
    wireup::spank::SweepOptions options;
    std::vector<std::string> args;
    bool trace = false;
    std::unique_ptr<Chase> chase;
    for (int i = 4; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--trace")
        trace = true;
      else if (a.rfind("--chase=", 0) == 0)
        chase = std::make_unique<Chase>(std::string(argv[1]) + "/wireup-" + argv[2], a.substr(8));
      else
        args.emplace_back(a);
    }
    options.on_enter = [&](std::uint64_t dev, std::uint64_t ino) {
      if (trace)
        std::printf("enter %llu %llu\n", static_cast<unsigned long long>(dev),
                    static_cast<unsigned long long>(ino));
      if (chase) chase->entered(ino);
    };
    options.limits = wireup::parse_admin_args(args).memory_snapshot_limits;
    const auto r =
        wireup::spank::sweep_job_snapshots(argv[1], argv[2], static_cast<uid_t>(*uid), options);
    std::printf("line: %s\n", wireup::spank::describe(r, argv[1], argv[2]).c_str());
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    std::printf("entries=%llu dirs_entered=%llu revisits=%llu left=%llu maxrss_kb=%ld\n",
                static_cast<unsigned long long>(r.entries),
                static_cast<unsigned long long>(r.dirs_entered),
                static_cast<unsigned long long>(r.revisits),
                static_cast<unsigned long long>(r.left.count()), ru.ru_maxrss);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wireup_sweep_tool: %s\n", e.what());
    return 2;
  }
}
