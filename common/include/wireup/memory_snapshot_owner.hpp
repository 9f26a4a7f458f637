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

// Who made the directory: wireup-train itself, or spank_wireup's job prolog (root, for
// the job's user, before any task). A directory the prolog made outlives the job's steps:
// wireup-train removes only what it wrote in it, and the job's epilog removes the rest,
// so that no other user can take the name between two sruns of the job.
enum class SnapshotDirMaker { trainer, prolog };

// "wireup-memory-snapshot-owner 1\njob JOB\nuid UID\n", and "made_by prolog\n" after
// them when the prolog made the directory.
std::string snapshot_owner_text(std::string_view job_id, std::uint32_t uid,
                                SnapshotDirMaker maker = SnapshotDirMaker::trainer);

struct SnapshotOwner {
  std::string job;
  std::string uid;
  SnapshotDirMaker maker = SnapshotDirMaker::trainer;
};
// nullopt unless `text` is exactly a marker as snapshot_owner_text writes it.
std::optional<SnapshotOwner> parse_snapshot_owner(std::string_view text);

}  // namespace wireup
