#include "generate/generate_options.hpp"

#include <CLI/CLI.hpp>
#include <cmath>

#include "config/command_line.hpp"
#include "generate/prompt_tokenizer.hpp"
#include "wireup/error.hpp"
#if WIREUP_HAVE_TOKENIZER
#include "wireup/chat/chat_template.hpp"
#endif

namespace wireup::train::generate {
namespace {

void need(bool ok, const std::string& what) {
  if (!ok) throw InputError(what);
}

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check(const GenerateOptions& o) {
  need(o.init_from_hf.empty() != o.resume_from_checkpoint.empty(),
       "generate: pass exactly one of --init_from_hf DIR and --resume_from_checkpoint DIR (the "
       "weights to generate with)");
  need(o.lora_adapter.empty() || !o.init_from_hf.empty(),
       "generate: --lora_adapter DIR adapts the base of --init_from_hf DIR: pass both");
  need(!o.tokenizer.empty(),
       "generate: --tokenizer FILE is required (tokenizer.model or tokenizer.json of the model)");
  need(o.prompt.empty() || o.prompts_file.empty(),
       "generate: pass one of --prompt TEXT and --prompts FILE, not both");
  need(!o.prompt.empty() || !o.prompts_file.empty(),
       "generate: pass --prompt TEXT or --prompts FILE (a JSONL file, {\"prompt\": TEXT} a line)");
  need(o.max_new_tokens >= 1 && o.max_new_tokens <= kMaxNewTokens,
       "--max_new_tokens " + std::to_string(o.max_new_tokens) + ": expected 1 to " +
           std::to_string(kMaxNewTokens) + " tokens to generate");
  need(std::isfinite(o.sampling.temperature) && o.sampling.temperature >= 0,
       "--temperature " + number(o.sampling.temperature) +
           ": expected 0 (greedy) or a positive finite number");
  need(o.sampling.top_p > 0 && o.sampling.top_p <= 1,
       "--top_p " + number(o.sampling.top_p) + ": expected a number in (0, 1]");
  check_compute_choice(o.compute);
#if !WIREUP_HAVE_TOKENIZER
  need(!o.chat && o.chat_template.empty(), std::string(o.chat ? "--chat" : "--chat_template") +
                                               ": " + kTokenizerMissing +
                                               ", and the chat templates need it in this process");
#endif
}

}  // namespace

bool parse_generate_options(int argc, const char* const* argv, GenerateOptions& o) {
  CLI::App app{
      "wireup-train generate: complete prompts with a model, greedy (--temperature 0, the "
      "default) or sampled (--temperature T --top_p P --seed S), with a KV cache"};
  add_weights_options(app, o.init_from_hf, o.resume_from_checkpoint, o.lora_adapter);
  app.add_option("--tokenizer", o.tokenizer,
                 "the model's tokenizer: any wireup-prep reads (a SentencePiece or tiktoken "
                 "tokenizer.model, a byte-level BPE tokenizer.json)");
  app.add_flag("--chat", o.chat,
               "render each prompt as a user turn of the chat template plus the assistant's "
               "generation prompt");
  auto* chat_template =
      app.add_option("--chat_template", o.chat_template,
                     "with --chat: llama3, llama3.1, qwen2.5 or qwen3 (default: the checkpoint's "
                     "data set's, or the one the HF directory's tokenizer_config.json holds, else "
                     "llama3)");
#if WIREUP_HAVE_TOKENIZER
  chat_template->check(CLI::IsMember(wireup::chat::template_names()));
#else
  (void)chat_template;  // refused whole in check()
#endif
  app.add_option("--enable_thinking", o.enable_thinking,
                 "with --chat and qwen3: 0 ends the prompt with an empty <think></think> block, "
                 "so the model answers without reasoning (default 1)")
      ->check(CLI::IsMember({0, 1}));
  app.add_option("--prompt", o.prompt, "the prompt text");
  app.add_option("--prompts", o.prompts_file,
                 "a JSONL file, {\"prompt\": TEXT} a line: one JSON object a line out");
  app.add_option("--max_new_tokens", o.max_new_tokens, "most tokens to generate per prompt");
  app.add_option("--temperature", o.sampling.temperature, "0 (default): greedy; > 0: sampled");
  app.add_option("--top_p", o.sampling.top_p,
                 "nucleus: sample from the most probable tokens "
                 "whose probabilities sum to P (default 1)");
  app.add_option("--seed", o.seed, "the sampling seed (default 0)");
  app.add_flag("--show_ids", o.show_ids, "add the prompt's and completion's token ids");
  add_compute_flags(app, o.compute, ComputeFlags::Decode);
  app.add_option("--dtype", o.dtype,
                 "float32 (default) or bfloat16: the weights and the KV cache (logits and "
                 "sampling in float32)")
      ->check(CLI::IsMember({"float32", "bfloat16"}));
  if (!parse_command_line(app, argc, argv, "generate: ", "wireup-train generate --help"))
    return false;
  check(o);
  return true;
}

}  // namespace wireup::train::generate
