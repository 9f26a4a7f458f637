#include "wireup/sweep_budget.hpp"

#include "wireup/text.hpp"

namespace wireup {

bool SweepBudget::take(std::size_t bytes, std::uint64_t now_ns) {
  if (stop_ != SweepStop::None || !time_left(now_ns)) return false;
  if (entries_ + 1 > limits_.entries) {
    stop_ = SweepStop::Entries;
    return false;
  }
  if (bytes_ + bytes > limits_.name_bytes) {
    stop_ = SweepStop::NameBytes;
    return false;
  }
  ++entries_;
  bytes_ += bytes;
  return true;
}

bool SweepBudget::time_left(std::uint64_t now_ns) {
  const std::uint64_t elapsed = now_ns > start_ns_ ? now_ns - start_ns_ : 0;
  if (elapsed / 1000000000u < limits_.seconds) return true;
  if (stop_ == SweepStop::None) stop_ = SweepStop::Seconds;
  return false;
}

std::string SweepBudget::reason() const {
  switch (stop_) {
    case SweepStop::None:
      return "";
    case SweepStop::Entries:
      return "its budget of " + std::to_string(limits_.entries) +
             " entries (memory_snapshot_max_entries) was spent";
    case SweepStop::NameBytes:
      return "its budget of " + std::to_string(limits_.name_bytes) +
             " bytes of names (memory_snapshot_max_name_bytes) was spent";
    case SweepStop::Seconds:
      return "its budget of " + std::to_string(limits_.seconds) +
             " seconds (memory_snapshot_max_seconds) was spent";
    case SweepStop::Directories:
      return "it entered " + std::to_string(VisitedDirs::kDefaultMax) +
             " directories, all it keeps track of";
  }
  return "";
}

VisitedDirs::Insert VisitedDirs::insert(std::uint64_t dev, std::uint64_t ino) {
  const auto key = std::make_pair(dev, ino);
  if (seen_.count(key) != 0) return Insert::Seen;
  if (seen_.size() >= max_) return Insert::Full;
  seen_.insert(key);
  return Insert::New;
}

std::string shown_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return escape_text(text);
  return escape_text(text.substr(0, max_bytes)) + "...";
}

void LeftLog::add(std::string_view path, std::string_view why) {
  ++count_;
  if (shown_.size() < kShown) shown_.push_back(shown_text(path) + ": " + std::string(why));
}

}  // namespace wireup
