#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace wireup {

// Slurm reads plugstack.conf with fgets into a PATH_MAX (4096-byte) buffer
// (src/common/spank.c, _spank_stack_load), so a line holds at most 4095 bytes.
inline constexpr std::size_t kPlugstackLineMax = 4095;
// A plugstack.conf is a few lines; anything past 1 MiB is the wrong file.
inline constexpr std::size_t kPlugstackBytesMax = std::size_t{1} << 20;

// The words after spank_wireup.so on the first `required`/`optional` line that
// loads it, read as Slurm reads them ('#' starts a comment anywhere on a line,
// words are separated by spaces, tabs and newlines). `path` names the file in
// errors. Throws InputError when `text` holds a NUL byte, a line longer than
// kPlugstackLineMax or more than kPlugstackBytesMax bytes, or no such line.
std::vector<std::string> wireup_args_in_plugstack(std::string_view text, const std::string& path);

}  // namespace wireup
