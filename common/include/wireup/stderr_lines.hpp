#pragma once

namespace wireup {

// Makes every line a program writes to stderr reach the file or pipe in one write(2),
// so that the lines of several ranks sharing one log never interleave mid-line.
// glibc 2.41 writes one fprintf to an unbuffered stderr in several pieces; this gives
// stderr a line buffer (64 KiB: a longer line is written in 64 KiB pieces) and lets
// std::cerr go through it instead of flushing after every <<. Call first thing in main().
void stderr_by_whole_lines();

}  // namespace wireup
