#pragma once
#include <cstdint>
#include <string>

#include "config/compute_flags.hpp"
#include "eval/model_size.hpp"  // model_config_from_hf_config
#include "models/model_config.hpp"

namespace wireup::train {

// `wireup-train eval`'s command line. The model's shapes come from the
// weights (config.json or the checkpoint's metadata.json), not from flags.
struct EvalOptions {
  std::string init_from_hf;            // a Hugging Face Llama directory, or
  std::string resume_from_checkpoint;  // a wireup step directory or checkpoint directory
  std::string lora_adapter;            // with init_from_hf: a PEFT LoRA adapter directory
  std::string dataset;                 // --data: a wireup-prep output
  std::string split = "validation";    // train or validation
  std::int64_t context = 0;            // --max_context_width T
  std::int64_t eval_batches = 0;       // N windows
  std::int64_t eval_batch_size = 4;    // windows per forward pass
  std::string metrics_file;            // one JSON object, written atomically
  ComputeChoice compute;               // --device, --bf16, --sharding_strategy, --num_threads
};

// Parses argv (argv[0] is "eval"). Throws InputError naming a bad or missing
// flag; returns false (after printing usage) for --help.
bool parse_eval_options(int argc, const char* const* argv, EvalOptions& out);

}  // namespace wireup::train
