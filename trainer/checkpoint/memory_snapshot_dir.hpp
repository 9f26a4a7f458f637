#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

// Where memory snapshots live and the file-system safety rules around them
// (docs/memory-snapshots.md). Plain C++: no Torch, no Slurm headers.
//
//   DIR/                      0700, owned by the user (default /dev/shm/wireup-$SLURM_JOB_ID)
//     owner                   0600: "wireup-memory-snapshot-owner 1\njob J\nuid U\n"
//     <node>/                 0700, one per node (SLURMD_NODENAME, else the host name)
//       snap-00000040/        0700, one per snapshot step (see memory_snapshot_manifest.hpp)
//
// Every directory is checked on an open descriptor (O_DIRECTORY|O_NOFOLLOW):
// a symlink is never followed, a directory of another user or with group or
// other permission bits is refused. Every file is created 0600 under
// NAME.tmp with O_EXCL|O_NOFOLLOW, fsynced and renamed into place.
namespace wireup::train {

// The environment, as a lookup, so tests control it: nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
// getenv(3).
EnvLookup process_env();

// DIR: `flag` (--memory_checkpoint_dir) when not empty, else
// /dev/shm/wireup-$SLURM_JOB_ID. InputError naming --memory_checkpoint_dir
// when neither is set (or the job id is not digits).
std::filesystem::path memory_snapshot_root(const std::string& flag, const EnvLookup& env);

// This node's name: SLURMD_NODENAME, else gethostname(2). InputError when it
// is not a safe directory name (see is_safe_node_name).
std::string node_name(const EnvLookup& env);
// 1-255 characters of [A-Za-z0-9._-], not "." or "..".
bool is_safe_node_name(const std::string& name);

// Makes `path` a directory 0700 owned by the current user (mkdir, then fchmod
// so the umask cannot loosen or tighten it), or accepts an existing one only
// if it is a real directory (not a symlink), owned by the current uid, mode
// exactly 0700. Otherwise InputError "PATH: WHAT" ("a symlink", "owned by
// uid 1234, not you (1000)", "mode 0755, expected 0700", "not a directory").
// The parent must exist.
void open_private_dir(const std::filesystem::path& path);

// open_private_dir(root), then its owner marker: written (job, uid) when
// absent (job_id must be digits); when present it must be a regular file of
// this user naming this job and uid, else InputError naming both job ids
// ("ROOT belongs to job 111, this is job 222") or both uids.
void claim_root(const std::filesystem::path& root, const std::string& job_id);
// claim_root for the default directory (no --memory_checkpoint_dir): /dev/shm/wireup-JOBID
// is a name anyone can take before the job starts, so a refusal also names the fixes:
// spank_wireup's job prolog, which makes it for the job's user first, or a directory of
// the user's own with --memory_checkpoint_dir.
void claim_default_root(const std::filesystem::path& root, const std::string& job_id);
// The check claim_root makes of an existing marker, without writing one:
// false when root has no owner marker; InputError as claim_root.
bool check_root_owner(const std::filesystem::path& root, const std::string& job_id);

// Writes `bytes` bytes to `path` as a private file: PATH.tmp created 0600
// with O_EXCL|O_NOFOLLOW (a stale PATH.tmp is unlinked first, never
// followed), fsynced, renamed over PATH, directory fsynced. Returns the
// bytes' checksum (crc32c_quarters_hex). A failure leaves neither PATH.tmp nor a partial PATH.
std::string write_private_file(const std::filesystem::path& path, const void* data,
                               std::size_t bytes);
// A private file written through a shared mapping: NAME.tmp, which is the file already
// at NAME when there is one (a recycled snapshot's: a tmpfs reuses its pages instead of
// clearing fresh ones), 0600 and ours, its room reserved with fallocate (a full file
// system fails here, never as a SIGBUS later), mapped. The caller fills data() (a copy,
// or a receive straight into it); commit() checksums it, syncs it and renames it to NAME.
// Destroyed uncommitted, it removes NAME.tmp.
class MappedPrivateFile {
 public:
  MappedPrivateFile(const std::filesystem::path& path, std::size_t bytes);
  ~MappedPrivateFile();
  MappedPrivateFile(const MappedPrivateFile&) = delete;
  MappedPrivateFile& operator=(const MappedPrivateFile&) = delete;
  char* data() { return static_cast<char*>(map_); }
  std::size_t size() const { return bytes_; }
  std::string commit();  // the bytes' crc32c_quarters_hex

 private:
  std::filesystem::path path_, tmp_;
  int fd_ = -1;
  void* map_ = nullptr;
  std::size_t bytes_ = 0;
  bool committed_ = false;
};

// `bytes` of `data` into a MappedPrivateFile at `path`, committed; its checksum.
std::string rewrite_private_file(const std::filesystem::path& path, const void* data,
                                 std::size_t bytes);

// Reads a regular file without following a symlink (O_NOFOLLOW) and returns
// its crc32c_quarters_hex, or "" with `why` set ("missing", "a symlink", "N bytes,
// expected M", "not a regular file") when it is not the expected file.
std::string checksum_private_file(const std::filesystem::path& path, std::uint64_t expect_bytes,
                                  std::string& why);
// The whole text of a small private file (at most max_bytes), not following
// a symlink; nullopt with `why` set as above.
std::optional<std::string> read_private_text(const std::filesystem::path& path,
                                             std::uint64_t max_bytes, std::string& why);

// The names inside a node directory: "snap-00000040", "rank-00003.bin" (a
// rank's own part), "replica-rank-00003.bin" (a copy of rank 3's part held
// for another node), "manifest", "complete"; is_snapshot_file_name also
// accepts each with ".tmp" (a write cut short).
std::string snapshot_dir_name(std::int64_t step);
std::optional<std::int64_t> snapshot_dir_step(const std::string& name);
std::string part_file_name(int rank);
std::string replica_file_name(int rank);
bool is_snapshot_file_name(const std::string& name);

// "1.5 GiB", "512 MiB", "100 KiB", "17 B".
std::string human_bytes(std::uint64_t bytes);

// The capacity rule on its own: the file system must hold two snapshots
// (the newest complete one and the one in progress). `free_bytes` is what is
// available to the user now, `reusable_bytes` what this job's own snapshots
// there already take (they are replaced, not added to). "" when it fits,
// else the reason naming DIR and both sizes.
std::string capacity_problem(const std::filesystem::path& dir, std::uint64_t bytes_per_snapshot,
                             std::uint64_t free_bytes, std::uint64_t reusable_bytes);
// statvfs(dir) and the bytes of the regular files under dir (not following
// symlinks: this job's snapshots there), then capacity_problem; InputError
// with its reason. `dir` is this node's directory, DIR/<node>.
void check_capacity(const std::filesystem::path& dir, std::uint64_t bytes_per_snapshot);

// Removes DIR/<node>/snap-N (before a snapshot of that step starts afresh,
// or when retention drops it) the way remove_snapshot_dir does; returns what
// it left.
std::vector<std::string> remove_snapshot_step(const std::filesystem::path& node_dir,
                                              std::int64_t step);

// Turns the retired DIR/<node>/snap-`from` into snap-`to` for the next snapshot to
// overwrite (rewrite_private_file): its commit marker and manifest go first, so it
// is never taken for a complete snapshot, then every file not named in `keep`.
// False (nothing changed) when snap-`from` is not a private directory of ours.
bool recycle_snapshot_dir(const std::filesystem::path& node_dir, std::int64_t from, std::int64_t to,
                          const std::vector<std::string>& keep);

// Removes, on a job's success, what this job made under root/node: snapshot
// directories (snap-NNNNNNNN) and the files named by this library inside
// them, then root/node; then the owner marker and root if nothing else is
// left in it, unless the marker says the job prolog made root: then root and
// the marker stay for the job's epilog (no other user can take root's name
// before the job's next srun). Never follows a symlink; an entry it did not make (another
// name, a symlink, another owner) is left and named in the returned list.
// InputError when root's owner marker names another job or user.
std::vector<std::string> remove_snapshot_dir(const std::filesystem::path& root,
                                             const std::string& node, const std::string& job_id);

}  // namespace wireup::train
