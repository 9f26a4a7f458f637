#include "wireup/memory_snapshot_owner.hpp"

#include <vector>

#include "wireup/text.hpp"

namespace wireup {
namespace {
constexpr std::string_view kMagic = "wireup-memory-snapshot-owner 1";
constexpr std::string_view kMadeByProlog = "made_by prolog";
}  // namespace

std::string snapshot_dir_name_for_job(std::string_view job_id) {
  return "wireup-" + std::string(job_id);
}

std::string snapshot_owner_text(std::string_view job_id, std::uint32_t uid,
                                SnapshotDirMaker maker) {
  std::string text =
      std::string(kMagic) + "\njob " + std::string(job_id) + "\nuid " + std::to_string(uid) + "\n";
  if (maker == SnapshotDirMaker::prolog) text += std::string(kMadeByProlog) + "\n";
  return text;
}

std::optional<SnapshotOwner> parse_snapshot_owner(std::string_view text) {
  const std::vector<std::string> lines = split(text, '\n');
  const bool by_prolog = lines.size() == 5 && lines[3] == kMadeByProlog;
  if ((lines.size() != 4 && !by_prolog) || lines[0] != kMagic || lines[1].rfind("job ", 0) != 0 ||
      lines[2].rfind("uid ", 0) != 0 || !lines.back().empty())
    return std::nullopt;
  return SnapshotOwner{lines[1].substr(4), lines[2].substr(4),
                       by_prolog ? SnapshotDirMaker::prolog : SnapshotDirMaker::trainer};
}

}  // namespace wireup
