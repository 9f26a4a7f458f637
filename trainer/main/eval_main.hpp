#pragma once
namespace wireup::train {

// `wireup-train eval ...` (argv[0] is "eval"): the mean next-token loss and
// perplexity of a Hugging Face or wireup checkpoint on the first N windows of
// a prepared split, at any world size (eval/eval_plan.hpp: which windows,
// which rank). SIGTERM/SIGUSR1 end it at once (killed by the signal, as
// stop_signals.hpp does without a checkpoint to save). Returns the exit code.
int run_eval(int argc, char** argv);

}  // namespace wireup::train
