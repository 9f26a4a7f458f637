// wireup-prep: text or JSONL in, token shards + manifest.json out, with a
// SentencePiece model (given, or trained on the input) or a byte-level BPE
// one (Llama 3's tiktoken tokenizer.model, a Hugging Face tokenizer.json);
// `wireup-prep inspect` lists a prepared data set. Usage and examples:
// docs/wireup-prep.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <map>

#include "wireup/chat/chat_template.hpp"
#include "wireup/error.hpp"
#include "wireup/inspect/inspect.hpp"
#include "wireup/prep/prep.hpp"
#include "wireup/serve/tokenizer_server.hpp"
#include "wireup/stderr_lines.hpp"

namespace {
namespace prep = wireup::prep;

// Ctrl-C or SIGTERM stops within seconds, the output as it was (staging
// removed); exit status 128 + the signal.
extern "C" void on_signal(int sig) { prep::request_stop(sig); }

// What the command line is read into, before it becomes PrepOptions.
struct Flags {
  prep::PrepOptions o;
  std::string tokenizer, separator, verify, format = "auto", text_docs = "file", threads;
  std::string chat_template, train_on = "assistant", chat_date{wireup::chat::kLlama31DefaultDate};
  bool skip_bad_rows = false;
  bool no_bos = false, no_eos = false, quiet = false;
  prep::InspectOptions inspect;
  std::string inspect_tokenizer;
  std::string served_tokenizer;
};

// The input and the tokenizer.
void add_input_options(CLI::App& app, Flags& f) {
  app.add_option("inputs", f.o.inputs,
                 "Text or JSONL files or directories (optionally .gz or .zst)");
  app.add_option("-o,--output", f.o.output, "Output directory for shards and manifest.json");
  app.add_option("--tokenizer", f.tokenizer,
                 "Tokenizer to use: a SentencePiece model (Llama 2 tokenizer.model), a tiktoken "
                 "file (Llama 3 tokenizer.model) or a byte-level BPE tokenizer.json");
  app.add_option("--vocab-size", f.o.vocab_size,
                 "Instead of --tokenizer: train a SentencePiece model of this size on the input")
      ->check(CLI::Range(1u, 1u << 24));
  app.add_option("--model-type", f.o.model_type, "Model type when training: bpe or unigram")
      ->capture_default_str()
      ->check(CLI::IsMember({"bpe", "unigram"}));
  app.add_option("--train-sentences", f.o.train_sentences,
                 "Lines sampled from the input to train the tokenizer")
      ->capture_default_str();
  app.add_option("--format", f.format,
                 "auto (.jsonl/.ndjson[.gz|.zst] are JSONL, the rest text), text or jsonl")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "text", "jsonl"}));
  app.add_option("--jsonl-field", f.o.docs.jsonl_field, "JSONL field holding the text")
      ->capture_default_str();
  app.add_option(
         "--text-docs", f.text_docs,
         "Documents in text files: file (whole file), paragraph (blank-line separated) or line")
      ->capture_default_str()
      ->check(CLI::IsMember({"file", "paragraph", "line"}));
  app.add_option("--doc-separator", f.separator,
                 "Text files: a line exactly equal to this separates documents (e.g. %)");
}

// Conversations for supervised fine-tuning (docs/wireup-prep-chat.md).
void add_chat_options(CLI::App& app, Flags& f) {
  app.add_option("--chat-template", f.chat_template,
                 "JSONL rows are conversations ('messages', or 'prompt' and 'completion'), "
                 "rendered by this Instruct model's chat template: llama3, llama3.1, qwen2.5 "
                 "or qwen3")
      ->check(CLI::IsMember(wireup::chat::template_names()));
  app.add_option("--train-on", f.train_on,
                 "Tokens the loss mask trains: all, assistant (each assistant message and its "
                 "end token, <|eot_id|> or <|im_end|>) or last-assistant")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "assistant", "last-assistant"}));
  app.add_option("--chat-date", f.chat_date, "llama3.1: the system block's 'Today Date'")
      ->capture_default_str();
  app.add_flag("--skip-bad-rows", f.skip_bad_rows,
               "Leave out chat or preference rows that are bad (counted and reported) "
               "instead of stopping at the first");
}

// --chat-template's options into PrepOptions; the options that do not go
// with it (or only with it) are refused.
void chat_options(const CLI::App& app, Flags& f) {
  if (f.chat_template.empty()) {
    for (const char* o : {"--train-on", "--chat-date"})
      if (app.count(o) > 0) throw wireup::InputError(std::string(o) + " needs --chat-template");
    return;
  }
  for (const char* o : {"--no-bos", "--no-eos", "--jsonl-field"})
    if (app.count(o) > 0)
      throw wireup::InputError(std::string(o) +
                               " does not apply with --chat-template (the template puts "
                               "the conversation's special tokens)");
  prep::ChatPrepOptions c;
  c.tmpl.chat_template = wireup::chat::parse_template(f.chat_template, "--chat-template");
  c.tmpl.train_on = wireup::chat::parse_train_on(f.train_on, "--train-on");
  c.tmpl.date_string = f.chat_date;
  f.o.chat = c;
}

// The splits, the shards, the run; --verify.
void add_output_options(CLI::App& app, Flags& f) {
  app.add_option("--val-fraction", f.o.validation_fraction,
                 "Fraction of documents for the validation split")
      ->capture_default_str();
  app.add_option("--seed", f.o.seed, "Seed of the validation split and tokenizer sample")
      ->capture_default_str();
  app.add_option("--shard-tokens", f.o.shard_tokens,
                 "Tokens per shard (documents never straddle shards)")
      ->capture_default_str();
  app.add_option("--max-doc-bytes", f.o.docs.max_doc_bytes,
                 "Longest document (or line) accepted; a longer one is an error naming it")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_flag("--no-bos", f.no_bos, "Do not add BOS before each document");
  app.add_flag("--no-eos", f.no_eos, "Do not add EOS after each document");
  app.add_option(
      "-j,--threads", f.threads,
      "Tokenizer threads, 1 to " + std::to_string(prep::kMaxThreads) + " (default: every core)");
  app.add_flag("--force", f.o.force, "Replace a data set already prepared in --output");
  app.add_flag("-q,--quiet", f.quiet, "No progress or summary");
  app.add_option(
      "--verify", f.verify,
      "Check a prepared directory (or its manifest.json) against its checksums and exit");
  app.footer(
      "Example: wireup-prep --tokenizer llama2/tokenizer.model --jsonl-field text -o /fsx/data "
      "corpus/");
}

// `wireup-prep inspect DATASET`: a subcommand. Command lines without the
// bare word "inspect" parse as before (an input of that name: ./inspect).
CLI::App* add_inspect_command(CLI::App& app, Flags& f) {
  auto* cmd = app.add_subcommand(
      "inspect",
      "Print a prepared data set's facts and its first documents (token ids and decoded text) in "
      "the order the trainer reads them");
  cmd->add_option("dataset", f.inspect.dataset, "The prepared directory or its manifest.json")
      ->required();
  cmd->add_option("--split", f.inspect.split, "train or validation")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "validation"}));
  cmd->add_option("--docs", f.inspect.docs, "Documents to show, from the split's start")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->add_option("--max-tokens", f.inspect.max_tokens, "Token ids (and their text) per document")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  cmd->footer("Example: wireup-prep inspect /fsx/data/pile --split validation --docs 5");
  cmd->add_option("--tokenizer", f.inspect_tokenizer,
                  "Decode with this tokenizer file (default: the data set's own copy, "
                  "as its manifest records it)");
  return cmd;
}

// `wireup-prep serve-tokenizer TOKENIZER`: the tokenizer behind stdin and
// stdout (data/serve/), for wireup-train generate.
CLI::App* add_serve_command(CLI::App& app, Flags& f) {
  auto* cmd = app.add_subcommand(
      "serve-tokenizer",
      "Answer encode/decode requests on stdin and stdout (data/serve/tokenizer_wire.hpp): "
      "what wireup-train generate runs for a SentencePiece model");
  cmd->add_option("tokenizer", f.served_tokenizer, "The tokenizer file")->required();
  return cmd;
}

int run_inspect(const CLI::App& app, Flags& f) {
  for (const auto* opt : app.get_options())
    if (opt->count() > 0 && opt->get_name() != "--help")
      throw wireup::InputError("inspect takes no " + opt->get_name() +
                               " (its options: wireup-prep inspect --help)");
  if (!f.inspect_tokenizer.empty()) f.inspect.tokenizer = f.inspect_tokenizer;
  prep::inspect_dataset(f.inspect, std::cout);
  return 0;
}

int run_verify(const Flags& f) {
  if (!f.o.inputs.empty() || !f.o.output.empty())
    throw wireup::InputError("--verify DIR takes no inputs and no --output");
  prep::verify_dataset(f.verify);
  if (!f.quiet) std::cerr << "wireup-prep: " << f.verify << ": all shards match manifest.json\n";
  return 0;
}

int run_prep(const CLI::App& app, Flags& f) {
  static const std::map<std::string, prep::InputFormat> formats = {
      {"auto", prep::InputFormat::Auto},
      {"text", prep::InputFormat::Text},
      {"jsonl", prep::InputFormat::Jsonl}};
  static const std::map<std::string, prep::TextDocs> text_modes = {
      {"file", prep::TextDocs::File},
      {"paragraph", prep::TextDocs::Paragraph},
      {"line", prep::TextDocs::Line}};
  prep::PrepOptions& o = f.o;
  if (app.count("--threads") > 0) o.threads = prep::parse_threads(f.threads);
  if (!f.tokenizer.empty()) o.tokenizer = f.tokenizer;
  o.format = formats.at(f.format);
  o.docs.text_docs = text_modes.at(f.text_docs);
  if (app.count("--doc-separator") > 0) o.docs.separator = f.separator;
  o.add_bos = !f.no_bos;
  o.add_eos = !f.no_eos;
  chat_options(app, f);
  o.skip_bad_rows = f.skip_bad_rows;
  o.progress = !f.quiet;
  o.log = f.quiet ? nullptr : &std::cerr;
  o.log_is_terminal = ::isatty(STDERR_FILENO) == 1;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  prep::run_prep(o);
  return 0;
}

// The parsed command's work; its errors as exit codes (2: bad input,
// 128 + signal: stopped, 1: a bug).
int run(const CLI::App& app, const CLI::App& inspect_cmd, const CLI::App& serve_cmd, Flags& f) {
  try {
    if (inspect_cmd.parsed()) return run_inspect(app, f);
    if (serve_cmd.parsed()) {
      for (const auto* opt : app.get_options())
        if (opt->count() > 0 && opt->get_name() != "--help")
          throw wireup::InputError("serve-tokenizer takes no " + opt->get_name());
      return wireup::serve::serve_tokenizer(f.served_tokenizer, STDIN_FILENO, STDOUT_FILENO);
    }
    if (!f.verify.empty()) return run_verify(f);
    return run_prep(app, f);
  } catch (const wireup::InputError& e) {
    std::cerr << "wireup-prep: error: " << e.what() << "\n";
    if (const int sig = prep::stop_signal(); sig != 0) return 128 + sig;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "wireup-prep: internal error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "wireup-prep: internal error: unknown exception\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape): setup only allocates
  wireup::stderr_by_whole_lines();
  Flags flags;
  CLI::App app{
      "wireup-prep: tokenise text or JSONL into wireup token shards (see docs/wireup-prep.md)"};
  add_input_options(app, flags);
  add_chat_options(app, flags);
  add_output_options(app, flags);
  const CLI::App* inspect_cmd = add_inspect_command(app, flags);
  const CLI::App* serve_cmd = add_serve_command(app, flags);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // --help, or a usage error
  }
  return run(app, *inspect_cmd, *serve_cmd, flags);
}
