#include "wireup/memory_snapshot_owner.hpp"

#include <vector>

#include "wireup/text.hpp"

namespace wireup {
namespace {
constexpr std::string_view kMagic = "wireup-memory-snapshot-owner 1";
}  // namespace

std::string snapshot_dir_name_for_job(std::string_view job_id) {
  return "wireup-" + std::string(job_id);
}

std::string snapshot_owner_text(std::string_view job_id, std::uint32_t uid) {
  return std::string(kMagic) + "\njob " + std::string(job_id) + "\nuid " + std::to_string(uid) +
         "\n";
}

std::optional<SnapshotOwner> parse_snapshot_owner(std::string_view text) {
  const std::vector<std::string> lines = split(text, '\n');
  if (lines.size() != 4 || lines[0] != kMagic || lines[1].rfind("job ", 0) != 0 ||
      lines[2].rfind("uid ", 0) != 0 || !lines[3].empty())
    return std::nullopt;
  return SnapshotOwner{lines[1].substr(4), lines[2].substr(4)};
}

}  // namespace wireup
