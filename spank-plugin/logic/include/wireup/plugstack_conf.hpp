#pragma once
#include <cstddef>
#include <functional>
#include <optional>
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

// The texts of the files an `include` line names (its pattern, relative
// patterns already made absolute), in the order Slurm loads them.
using IncludeReader = std::function<std::vector<std::string>(const std::string& pattern)>;

// A container plugin (pyxis) loaded after spank_wireup.so: its task_init
// runs after wireup's, moves the task into the container and imports the
// image's environment with overwrite.
struct ContainerAfterWireup {
  std::size_t wireup_line = 0;     // line of plugstack.conf loading spank_wireup.so
  std::size_t container_line = 0;  // line loading the container plugin, or including it
  std::string text;                // that line, without its comment
};

// True when a plugin path names a container plugin (pyxis: spank_pyxis.so).
bool is_container_plugin(std::string_view path);

// Reads plugstack.conf as wireup_args_in_plugstack does (same bounds) and
// finds a container plugin loaded after wireup's line, directly or through an
// include (whose pattern names pyxis, or whose files load it). nullopt when
// wireup is not loaded by `text` itself, or nothing follows it.
std::optional<ContainerAfterWireup> container_after_wireup(std::string_view text,
                                                           const std::string& path,
                                                           const IncludeReader& included);

// What --wireup-verbose and wireup-env print about it: the plugin, what it
// overrides and the fix.
std::string order_warning(const ContainerAfterWireup& c, const std::string& path);

// The plugstack.conf a slurm.conf names: its PlugStackConfig (relative to the
// slurm.conf's directory), else plugstack.conf beside it.
std::string plugstack_path_for(std::string_view slurm_conf_text, const std::string& slurm_conf);

}  // namespace wireup
