#pragma once
// Where agent mode keeps its per-run files (workers' error.json, and the logs
// with --log-dir) when the user names no directory.
#include <sys/types.h>

#include <optional>
#include <string>

namespace wireup {

// The temporary directory's base: $TMPDIR when set and not empty, else /tmp.
std::string temp_base(const std::optional<std::string>& tmpdir);

// mkdtemp's template under `base` for user `uid`: BASE/wireup-launch-UID.XXXXXX.
std::string run_dir_template(const std::string& base, uid_t uid);

// Why `base` (lstat's mode) cannot hold a private run directory, or nullopt:
// it must be a directory, and one that others may write to must be sticky
// (as /tmp is), or they could rename the run directory away and put theirs
// in its place.
std::optional<std::string> temp_base_problem(const std::string& base, mode_t mode);

}  // namespace wireup
