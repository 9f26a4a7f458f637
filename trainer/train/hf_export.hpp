#pragma once

namespace wireup::train {

// `wireup-train export ...`: writes a Hugging Face Llama checkpoint
// (model.safetensors + config.json) from any wireup checkpoint.
// argv[0] is "export". Returns the process exit code.
int run_export(int argc, char** argv);

}  // namespace wireup::train
