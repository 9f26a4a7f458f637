// wireup-train generate: flags, tokenizer, prompts and the weights' shapes
// checked before anything is built; then the model, its weights, and each
// prompt through the KV cache until a stop token, --max_new_tokens or the
// context.
#include "main/generate_main.hpp"

#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_files.hpp"
#include "eval/model_size.hpp"
#include "generate/generate_options.hpp"
#include "generate/generation_io.hpp"
#include "generate/prompt_tokenizer.hpp"
#include "generate/sampling.hpp"
#include "hf/hf_config.hpp"
#include "main/model_weights.hpp"
#include "main/run_setup.hpp"
#include "models/family_registry.hpp"
#include "models/model_registry.hpp"
#include "models/sharded_model.hpp"
#include "wireup/error.hpp"
#if WIREUP_HAVE_TOKENIZER
#include "wireup/chat/chat_encoder.hpp"
#include "wireup/tokenizer/tokenizer.hpp"
#endif

namespace wireup::train {
namespace {

namespace gen = wireup::train::generate;

// While alive, what the setup prints on stdout (the [init] line) goes to
// stderr: stdout holds the completions only.
class StdoutToStderr {
 public:
  StdoutToStderr() : saved_(::dup(STDOUT_FILENO)) {
    std::fflush(stdout);
    if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutToStderr() { restore(); }
  void restore() {
    std::fflush(stdout);
    if (saved_ >= 0) ::dup2(saved_, STDOUT_FILENO), ::close(saved_);
    saved_ = -1;
  }
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_;
};

// --chat's template: the flag's, else the one the weights name (a
// checkpoint's data set's, a published one in tokenizer_config.json), else
// llama3; the choice and where it came from on stderr (stdout holds the
// completions).
void choose_chat_template(gen::GenerateOptions& o, const Weights& weights) {
  std::string from = "--chat_template";
  if (o.chat_template.empty() && !weights.chat_template.empty()) {
    o.chat_template = weights.chat_template;
    from = weights.chat_template_source;
  } else if (o.chat_template.empty()) {
    o.chat_template = "llama3";
    from = "the default: " + weights.describe() + " names none";
  }
  std::fprintf(stderr, "[generate] chat_template=%s (%s)\n", o.chat_template.c_str(), from.c_str());
}

// The ids each prompt is fed as: <|begin_of_text|> + the text, or with --chat
// the template's user turn and the assistant's generation prompt.
std::vector<std::vector<std::int64_t>> prompt_ids(const gen::GenerateOptions& o,
                                                  const gen::PromptTokenizer& tok,
                                                  const std::vector<std::string>& prompts) {
  std::vector<std::vector<std::int64_t>> out;
  if (o.chat && tok.local() == nullptr)
    throw InputError("--chat: --tokenizer " + o.tokenizer +
                     " is a SentencePiece model, which has none of the chat templates' special "
                     "tokens: pass a tokenizer.json or tiktoken model of the template's family");
#if WIREUP_HAVE_TOKENIZER
  if (o.chat) {
    chat::TemplateOptions t;
    t.chat_template = chat::parse_template(o.chat_template, "--chat_template");
    t.enable_thinking = o.enable_thinking != 0;
    const chat::ChatEncoder enc(*tok.local(), "--tokenizer " + o.tokenizer, t);
    for (const std::string& p : prompts) {
      auto parts = chat::render(chat::Conversation{{{chat::Role::User, p}}}, t);
      chat::add_generation_prompt(parts, t);
      std::vector<std::uint32_t> ids;
      std::vector<std::uint8_t> mask;
      enc.encode_parts(parts, ids, mask);
      out.emplace_back(ids.begin(), ids.end());
    }
    return out;
  }
#endif
  for (const std::string& p : prompts) {
    std::vector<int> ids;
    if (tok.bos_id() >= 0) ids.push_back(tok.bos_id());
    const std::vector<int> text = tok.encode(p);
    ids.insert(ids.end(), text.begin(), text.end());
    out.emplace_back(ids.begin(), ids.end());
  }
  return out;
}

// The context from config.json's max_position_embeddings (a checkpoint's
// metadata holds it already), and the tokenizer against the model.
void check_against_model(const gen::GenerateOptions& o, Weights& weights,
                         const gen::PromptTokenizer& tok,
                         const std::vector<std::vector<std::int64_t>>& ids) {
  ModelConfig& m = weights.model;
  check_model_size(m, weights.source, weights.hf_dir.empty() ? kCheckpointFields : kHfConfigFields,
                   1, physical_memory_bytes());
  if (!weights.hf_dir.empty()) {
    const auto facts =
        hf::check_config(read_text(weights.source, hf::kMaxConfigBytes), weights.source, m);
    if (!facts.max_position_embeddings || *facts.max_position_embeddings < 1)
      throw InputError(weights.source +
                       ": no max_position_embeddings: the model's context is unknown");
    m.context = *facts.max_position_embeddings;
  }
  check_model_config(m);
  if (static_cast<std::int64_t>(tok.vocab_size()) > m.vocab)
    throw InputError("--tokenizer " + o.tokenizer + ": " + std::to_string(tok.vocab_size()) +
                     " tokens, more than the model's vocab_size " + std::to_string(m.vocab) + " (" +
                     weights.describe() + "): not this model's tokenizer");
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto n = static_cast<std::int64_t>(ids[i].size());
    if (n < m.context) continue;
    const std::string which = o.prompts_file.empty() ? "--prompt"
                                                     : "--prompts " + o.prompts_file + ": prompt " +
                                                           std::to_string(i + 1);
    throw InputError(which + ": " + std::to_string(n) + " tokens, and the model's context is " +
                     std::to_string(m.context) + " (" + weights.source + "): at most " +
                     std::to_string(m.context - 1) + " leave room for one generated token");
  }
}

// The units' parameters as the family's decoder takes them, in `dtype` on
// the model's device. The FSDP model (built for inference: no gradient
// shards) is dropped here: the decoder keeps its parameters alive (float32:
// the same storage; bfloat16: copies).
std::vector<std::vector<at::Tensor>> decoder_params(const ModelConfig& m, const Weights& weights,
                                                    const ComputeChoice& compute,
                                                    const WorldLayout& w, at::ScalarType dtype) {
  const CommGroups groups = start_ranks(w, compute);
  ShardedModel model(m, groups, inference_model_options(w, compute), 0);
  load_weights(model, weights, groups, w);
  std::vector<std::vector<at::Tensor>> params;
  for (const auto& unit : model.units()) {
    std::vector<at::Tensor> p;
    for (const at::Tensor& t : unit->params()) p.push_back(t.to(dtype));
    params.push_back(std::move(p));
  }
  return params;
}

// The completion's text; an id the tokenizer does not have (a model whose
// vocabulary is larger than its tokenizer's) shows as <|id:N|>.
std::string decode_text(const gen::PromptTokenizer& tok, const std::vector<std::int64_t>& ids) {
  std::string text;
  std::vector<int> run;  // ids the tokenizer has, decoded together
  for (const std::int64_t id : ids) {
    if (id >= 0 && id < static_cast<std::int64_t>(tok.vocab_size())) {
      run.push_back(static_cast<int>(id));
      continue;
    }
    text += tok.decode(run) + "<|id:" + std::to_string(id) + "|>";
    run.clear();
  }
  return text + tok.decode(run);
}

gen::Completion complete(TokenDecoder& decoder, gen::TokenSampler& sampler,
                         const gen::StopRule& stop, const std::vector<std::int64_t>& prompt,
                         std::int64_t max_new_tokens) {
  gen::Completion c;
  c.prompt_ids = prompt;
  decoder.reset();
  at::Tensor logits = decoder.feed(at::tensor(prompt, at::kLong));
  while (true) {
    const at::Tensor row = logits.cpu().contiguous();
    const std::int64_t id =
        sampler.pick(row.data_ptr<float>(), static_cast<std::size_t>(row.numel()));
    if (stop.stops(id)) {
      c.stop = gen::StopReason::StopToken;
      break;
    }
    c.ids.push_back(id);
    if (static_cast<std::int64_t>(c.ids.size()) >= max_new_tokens) {
      c.stop = gen::StopReason::MaxNewTokens;
      break;
    }
    if (decoder.position() + 1 >= decoder.capacity()) {  // the sequence fills the context
      c.stop = gen::StopReason::Context;
      break;
    }
    logits = decoder.feed(at::tensor(std::vector<std::int64_t>{id}, at::kLong));
  }
  return c;
}

}  // namespace

int run_generate(int argc, char** argv) {
  keep_freed_memory();
  gen::GenerateOptions o;
  if (!gen::parse_generate_options(argc, argv, o)) return 0;
  const WorldLayout w = world_from_env();
  if (w.world != 1)
    throw InputError("generate runs as one process (this is rank " + std::to_string(w.rank) +
                     " of " + std::to_string(w.world) + "): start it without srun/torchrun");

  // Everything from outside is checked before the model is built.
  const gen::PromptTokenizer tok(o.tokenizer, "--tokenizer");
  const std::vector<std::string> prompts = o.prompts_file.empty()
                                               ? std::vector<std::string>{o.prompt}
                                               : gen::read_prompts_file(o.prompts_file);
  Weights weights = find_weights(o.init_from_hf, o.resume_from_checkpoint, o.lora_adapter);
  if (o.chat) choose_chat_template(o, weights);
  const auto ids = prompt_ids(o, tok, prompts);
  check_against_model(o, weights, tok, ids);
  const ModelConfig& m = weights.model;
  // The end tokens of Llama 3 and of Qwen (ChatML), where the tokenizer has them.
  const gen::StopRule stop({tok.eos_id(), tok.special_id("<|eot_id|>"),
                            tok.special_id("<|end_of_text|>"), tok.special_id("<|im_end|>"),
                            tok.special_id("<|endoftext|>")});

  const ComputeChoice& compute = o.compute;
  std::int64_t longest = 0;
  for (const auto& p : ids)
    longest = std::max<std::int64_t>(longest, static_cast<std::int64_t>(p.size()));
  StdoutToStderr setup_lines;
  const at::ScalarType dtype = o.dtype == "bfloat16" ? at::kBFloat16 : at::kFloat;
  const std::unique_ptr<TokenDecoder> decoder =
      model_spec(m).decoder(m, decoder_params(m, weights, compute, w, dtype),
                            std::min(m.context, longest + o.max_new_tokens));
  setup_lines.restore();

  const auto t0 = std::chrono::steady_clock::now();
  std::int64_t generated = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    // Prompt i draws from its own stream of the seed: its completion does not
    // depend on the prompts before it.
    gen::TokenSampler sampler(o.sampling, o.seed, i);
    gen::Completion c = complete(*decoder, sampler, stop, ids[i], o.max_new_tokens);
    c.prompt = prompts[i];
    c.text = decode_text(tok, c.ids);
    generated += static_cast<std::int64_t>(c.ids.size());
    const std::string line = o.prompts_file.empty() && !o.show_ids
                                 ? c.text  // as decoded, NUL bytes included
                                 : gen::completion_json(c, o.show_ids);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "%s\n", gen::generate_summary(ids.size(), generated, seconds).c_str());
  return 0;
}

}  // namespace wireup::train
