#pragma once
#include <string>
#include <string_view>

#include "wireup/task_env.hpp"

namespace wireup {

// `value` as one POSIX shell word that evaluates to exactly these bytes in a POSIX
// shell (sh, bash, dash): single-quoted, each ' written as '\''. Nothing inside is
// expanded ($, `, \, newlines and spaces are literal).
std::string shell_quote(std::string_view value);

// One `export NAME='VALUE'` line per variable the plan sets, for
// eval "$(wireup-env --export)".
std::string export_lines(const TaskPlan& plan);

}  // namespace wireup
