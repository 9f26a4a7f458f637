#pragma once
#include <string>

namespace CLI {
class App;
}

namespace wireup::train {

// Parts of the command line that `wireup-train`, `wireup-train eval` and `wireup-train export`
// share (CLI11).

// --sharding_strategy with every spelling it accepts; parse_sharding maps the value.
void add_sharding_option(CLI::App& app, std::string& value);

// app.parse: false after printing --help; a bad command line throws InputError
// "PREFIX" NAME ": " WHAT " (see HELP_COMMAND)".
bool parse_command_line(CLI::App& app, int argc, const char* const* argv, const std::string& prefix,
                        const std::string& help_command);

}  // namespace wireup::train
