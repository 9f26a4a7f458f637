#pragma once
#include <cstdint>
#include <string>
#include <string_view>

// The job prolog's rules for DIR/wireup-JOBID (wireup-train's default memory snapshot
// directory), as plain logic: what it accepts there, and the names of the root-owned
// directory it works in. The node adapter (node/snapshot_prolog.cpp) does the I/O.
namespace wireup {

// What the prolog found at DIR/wireup-JOBID, as fstatat (AT_SYMLINK_NOFOLLOW) saw it.
struct FoundEntry {
  enum class Kind { Directory, Symlink, Other };
  Kind kind = Kind::Other;
  std::uint32_t uid = 0;
  unsigned mode = 0;  // st_mode & 07777
  // A directory of the job's user with mode 0700: its owner marker's problem ("" when
  // it names the job and user, as the epilog checks it). Not looked at otherwise.
  std::string marker_problem;
};

// "" when `e` is exactly the job's private directory as wireup-train makes it (a
// directory, not a symlink, of `job_uid`, mode 0700, with a marker naming the job and
// user): the prolog keeps it. Otherwise why it is not, for the log: the prolog moves
// it aside (a squatter's, or a leftover the trainer would refuse).
std::string squat_reason(const FoundEntry& e, std::uint32_t job_uid);

// The root-owned 0700 directory one prolog works in, beside DIR/wireup-JOBID:
// ".wireup-prolog-JOB-" and 16 hex digits of `random` (not predictable, so nobody can
// make it first). It holds the new directory until it is renamed into place, and what
// was moved aside; the job's epilog removes it.
std::string prolog_work_dir_name(std::string_view job, std::uint64_t random);
// Whether `name` is a work directory of `job`'s prolog (exactly as above).
bool is_prolog_work_dir_name(std::string_view name, std::string_view job);

// In the work directory: the new directory before it is renamed into place, and the
// name the N-th entry moved aside takes.
inline constexpr std::string_view kPrologNewEntry = "new";
std::string moved_entry_name(int n);

}  // namespace wireup
