#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wireup {

// A memory-snapshot directory (wireup-train --memory_checkpoint_dir) names its job and user
// in a marker file, so that neither a later job nor the SPANK plugin's job epilog ever takes
// another job's or user's snapshots for its own. Shared by the trainer, which writes and
// checks it, and the plugin, which removes a finished job's directories.
inline constexpr std::string_view kSnapshotOwnerFile = "owner";
inline constexpr std::uint64_t kSnapshotOwnerMaxBytes = 4096;

// The default directory's base name under its parent (/dev/shm/wireup-JOBID).
std::string snapshot_dir_name_for_job(std::string_view job_id);

// "wireup-memory-snapshot-owner 1\njob JOB\nuid UID\n".
std::string snapshot_owner_text(std::string_view job_id, std::uint32_t uid);

struct SnapshotOwner {
  std::string job;
  std::string uid;
};
// nullopt unless `text` is exactly a marker as snapshot_owner_text writes it.
std::optional<SnapshotOwner> parse_snapshot_owner(std::string_view text);

}  // namespace wireup
