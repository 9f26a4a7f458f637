#include "eval/eval_options.hpp"

#include <CLI/CLI.hpp>

#include "config/command_line.hpp"
#include "wireup/error.hpp"

namespace wireup::train {

bool parse_eval_options(int argc, const char* const* argv, EvalOptions& o) {
  CLI::App app{
      "wireup-train eval: mean next-token loss and perplexity of a model on the first N windows "
      "of a prepared split (window i: tokens i*T .. i*T+T of the split's stream)"};
  add_weights_options(app, o.init_from_hf, o.resume_from_checkpoint, o.lora_adapter);
  app.add_option("--data,--dataset", o.dataset, "manifest.json from wireup-prep (or its dir)")
      ->required();
  app.add_option("--split", o.split, "train or validation (default)")
      ->check(CLI::IsMember({"train", "validation"}));
  app.add_option("--max_context_width", o.context, "tokens per window T (targets: T)")->required();
  app.add_option("--eval_batches", o.eval_batches, "windows N to evaluate")->required();
  app.add_option("--eval_batch_size", o.eval_batch_size, "windows per forward pass (default 4)");
  app.add_option("--metrics_file", o.metrics_file, "write the result as one JSON object here");
  add_compute_flags(app, o.compute, ComputeFlags::Evaluate);
  if (!parse_command_line(app, argc, argv, "eval: ", "wireup-train eval --help")) return false;
  auto need = [](bool ok, const std::string& what) {
    if (!ok) throw InputError(what);
  };
  need(o.init_from_hf.empty() != o.resume_from_checkpoint.empty(),
       "eval: pass exactly one of --init_from_hf DIR and --resume_from_checkpoint DIR (the "
       "weights to evaluate)");
  need(o.lora_adapter.empty() || !o.init_from_hf.empty(),
       "eval: --lora_adapter DIR adapts the base of --init_from_hf DIR: pass both");
  need(o.context >= 1, "--max_context_width " + std::to_string(o.context) +
                           ": expected at least 1 token per window");
  need(o.eval_batches >= 1, "--eval_batches " + std::to_string(o.eval_batches) +
                                ": expected at least 1 window to evaluate");
  need(o.eval_batch_size >= 1, "--eval_batch_size " + std::to_string(o.eval_batch_size) +
                                   ": expected at least 1 window per forward pass");
  check_compute_choice(o.compute);
  return true;
}

}  // namespace wireup::train
