#pragma once
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// The job epilog's bounds on one sweep of a job's memory snapshots (it runs as root in
// slurmd, on a tree the job's user made): the budget it spends, the directories it has
// entered and what it left, each bounded. Plain logic: the clock and the (dev, ino)
// pairs come from the caller (spank-plugin/node/snapshot_sweep.cpp).
namespace wireup {

// plugstack.conf memory_snapshot_max_entries, _max_name_bytes, _max_seconds.
struct SweepLimits {
  std::uint64_t entries = 100000;       // names read from directories, in all
  std::uint64_t name_bytes = 8u << 20;  // bytes of those names, in all (what it holds)
  std::uint64_t seconds = 60;           // from the start of the sweep
};

enum class SweepStop { None, Entries, NameBytes, Seconds, Directories };

class SweepBudget {
 public:
  SweepBudget(const SweepLimits& limits, std::uint64_t start_ns)
      : limits_(limits), start_ns_(start_ns) {}
  // One more name of `bytes` bytes, read at `now_ns`: false, and stopped() says why,
  // when it does not fit. Once stopped, it stays stopped.
  bool take(std::size_t bytes, std::uint64_t now_ns);
  // Time is left at `now_ns`: the names already taken are worked through while it
  // is, even after the entries or bytes ran out (they were paid for).
  bool time_left(std::uint64_t now_ns);
  // The set of directories is full (VisitedDirs::Full).
  void stop_for_directories() { stop_ = SweepStop::Directories; }
  SweepStop stopped() const { return stop_; }
  std::uint64_t entries() const { return entries_; }
  std::uint64_t name_bytes() const { return bytes_; }
  // "" while it runs; else why it stopped, naming the admin argument.
  std::string reason() const;

 private:
  SweepLimits limits_;
  std::uint64_t start_ns_;
  std::uint64_t entries_ = 0, bytes_ = 0;
  SweepStop stop_ = SweepStop::None;
};

// The directories a sweep entered, by (st_dev, st_ino), at most `max` of them: a
// directory moved during the sweep to where the walk has not been yet is seen again,
// and is not walked twice.
class VisitedDirs {
 public:
  static constexpr std::size_t kDefaultMax = 65536;
  explicit VisitedDirs(std::size_t max = kDefaultMax) : max_(max) {}
  enum class Insert { New, Seen, Full };
  Insert insert(std::uint64_t dev, std::uint64_t ino);
  std::size_t size() const { return seen_.size(); }

 private:
  std::size_t max_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen_;
};

// User-controlled text as a log line may show it: at most `max_bytes` of it, escaped
// (escape_text: no control byte reaches the log), "..." when cut.
std::string shown_text(std::string_view text, std::size_t max_bytes = 256);

// What a sweep left, for its one log line: how many, and the first kShown as
// "PATH: why" (PATH shown_text; `why` is the sweep's own words, any user text in it
// already shown_text). Bounded whatever the tree holds.
class LeftLog {
 public:
  static constexpr std::size_t kShown = 4;
  void add(std::string_view path, std::string_view why);
  std::uint64_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  const std::vector<std::string>& shown() const { return shown_; }

 private:
  std::uint64_t count_ = 0;
  std::vector<std::string> shown_;
};

}  // namespace wireup
