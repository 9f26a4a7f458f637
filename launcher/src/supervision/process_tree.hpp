#pragma once
#include <cstddef>

namespace wireup {

// SIGKILLs every process below this one (as /proc shows them) and reaps those
// that were or become its children, until none is left (a few rounds at most:
// a process may fork while it is being killed). For a child subreaper at its
// end: a worker's daemon that left the worker's process group and session
// (setsid) is below the launcher still. Returns how many were killed.
std::size_t kill_descendants();

}  // namespace wireup
