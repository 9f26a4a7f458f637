#pragma once
#include <cstdint>
#include <string>

#include "config/compute_flags.hpp"
#include "generate/sampling.hpp"

namespace wireup::train::generate {

// `wireup-train generate`'s command line. The model's shapes come from the
// weights (config.json or the checkpoint's metadata.json), not from flags.
struct GenerateOptions {
  std::string init_from_hf;            // a Hugging Face Llama directory, or
  std::string resume_from_checkpoint;  // a wireup step directory or checkpoint directory
  std::string lora_adapter;            // with init_from_hf: a PEFT LoRA adapter directory
  std::string tokenizer;      // tokenizer.model (tiktoken, SentencePiece) or tokenizer.json
  bool chat = false;          // the prompt is a user turn of the chat template
  std::string chat_template;  // "": the weights' (checkpoint, tokenizer_config.json), else llama3
  int enable_thinking = 1;    // Qwen3's: 0 puts an empty reasoning block in the prompt
  std::string prompt;         // --prompt TEXT, or
  std::string prompts_file;   // --prompts FILE: JSONL, {"prompt": TEXT} a line
  std::int64_t max_new_tokens = 0;
  SamplingRule sampling;  // --temperature (0: greedy), --top_p
  std::uint64_t seed = 0;
  bool show_ids = false;          // the prompt's and completion's token ids in the output
  ComputeChoice compute;          // --device, --num_threads
  std::string dtype = "float32";  // the weights and the KV cache: float32 or bfloat16
};

// The longest run `--max_new_tokens` accepts.
constexpr std::int64_t kMaxNewTokens = std::int64_t{1} << 24;

// Parses argv (argv[0] is "generate"). Throws InputError naming a bad or
// missing flag; returns false (after printing usage) for --help.
bool parse_generate_options(int argc, const char* const* argv, GenerateOptions& out);

}  // namespace wireup::train::generate
