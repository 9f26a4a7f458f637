#pragma once
#include <filesystem>

namespace wireup {

// Agent mode without --log-dir: a fresh private directory for this run's
// files, made by mkdtemp (mode 0700, an unguessable name, never a path that
// exists already) under $TMPDIR or /tmp, which must be a directory and, when
// others may write to it, sticky. Throws std::runtime_error naming the base
// and what is wrong with it.
std::filesystem::path make_private_run_dir();

}  // namespace wireup
