#pragma once
#include <string>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace wireup::train {

// Parts of the command line that `wireup-train`, `wireup-train eval` and `wireup-train export`
// share (CLI11).

// A 0/1 flag bound to `field` (any other integer counts as 1).
CLI::Option* add_switch(CLI::App& app, const char* flag, bool& field, const char* help);

// The options of a subcommand that runs existing weights (eval, generate): CLI11's
// settings (no Windows-style options, a repeated flag's last value wins) and
// --init_from_hf DIR, --resume_from_checkpoint DIR, --lora_adapter DIR.
void add_weights_options(CLI::App& app, std::string& init_from_hf,
                         std::string& resume_from_checkpoint, std::string& lora_adapter);

// app.parse: false after printing --help; a bad command line throws InputError
// "PREFIX" NAME ": " WHAT " (see HELP_COMMAND)".
bool parse_command_line(CLI::App& app, int argc, const char* const* argv, const std::string& prefix,
                        const std::string& help_command);

}  // namespace wireup::train
