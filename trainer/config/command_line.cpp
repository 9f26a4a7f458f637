#include "config/command_line.hpp"

#include <CLI/CLI.hpp>
#include <iostream>

#include "wireup/error.hpp"

namespace wireup::train {

CLI::Option* add_switch(CLI::App& app, const char* flag, bool& field, const char* help) {
  return app.add_option_function<int>(
      flag, [&field](int v) { field = v != 0; }, help);
}

void add_weights_options(CLI::App& app, std::string& init_from_hf,
                         std::string& resume_from_checkpoint, std::string& lora_adapter) {
  app.allow_windows_style_options(false);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--init_from_hf", init_from_hf,
                 "a Hugging Face model directory (config.json + safetensors)");
  app.add_option("--resume_from_checkpoint", resume_from_checkpoint,
                 "a wireup checkpoint: a step directory, or a checkpoint directory (its newest "
                 "complete step); a LoRA run's: its adapters on the base it names");
  app.add_option("--lora_adapter", lora_adapter,
                 "with --init_from_hf: a LoRA adapter directory (adapter_config.json + "
                 "adapter_model.safetensors: wireup-train export's, or PEFT's) added to the base");
}

bool parse_command_line(CLI::App& app, int argc, const char* const* argv, const std::string& prefix,
                        const std::string& help_command) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw InputError(prefix + e.get_name() + ": " + e.what() + " (see " + help_command + ")");
  }
  return true;
}

}  // namespace wireup::train
