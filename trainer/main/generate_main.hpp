#pragma once
namespace wireup::train {

// `wireup-train generate ...` (argv[0] is "generate"): completes a prompt
// (--prompt: the completion on stdout) or each of a JSONL file's (--prompts:
// one JSON object a line) with a Hugging Face or wireup checkpoint, greedy or
// sampled, through a KV cache (model/kv_decode.hpp); one process, CPU or
// CUDA. Returns the exit code; bad input throws InputError (exit 2).
int run_generate(int argc, char** argv);

}  // namespace wireup::train
