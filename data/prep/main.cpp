// wireup-prep: text or JSONL in, SentencePiece token shards + manifest.json out.
// Usage and examples: docs/wireup-prep.md.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <map>

#include "wireup/error.hpp"
#include "wireup/inspect/inspect.hpp"
#include "wireup/prep/prep.hpp"

namespace {

// Ctrl-C or SIGTERM stops within seconds, the output as it was (staging
// removed); exit status 128 + the signal.
extern "C" void on_signal(int sig) { wireup::prep::request_stop(sig); }

}  // namespace

int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape): setup only allocates
  using wireup::prep::InputFormat;
  using wireup::prep::TextDocs;
  wireup::prep::PrepOptions o;
  std::string tokenizer, separator, verify, format = "auto", text_docs = "file", threads;
  bool no_bos = false, no_eos = false, quiet = false;

  CLI::App app{
      "wireup-prep: tokenise text or JSONL into wireup token shards (see docs/wireup-prep.md)"};
  app.add_option("inputs", o.inputs, "Text or JSONL files or directories (optionally .gz or .zst)");
  app.add_option("-o,--output", o.output, "Output directory for shards and manifest.json");
  app.add_option("--tokenizer", tokenizer,
                 "Tokenizer to use: a SentencePiece model (Llama 2 tokenizer.model), a tiktoken "
                 "file (Llama 3 tokenizer.model) or a byte-level BPE tokenizer.json");
  app.add_option("--vocab-size", o.vocab_size,
                 "Instead of --tokenizer: train a SentencePiece model of this size on the input")
      ->check(CLI::Range(1u, 1u << 24));
  app.add_option("--model-type", o.model_type, "Model type when training: bpe or unigram")
      ->capture_default_str()
      ->check(CLI::IsMember({"bpe", "unigram"}));
  app.add_option("--train-sentences", o.train_sentences,
                 "Lines sampled from the input to train the tokenizer")
      ->capture_default_str();
  const std::map<std::string, InputFormat> formats = {
      {"auto", InputFormat::Auto}, {"text", InputFormat::Text}, {"jsonl", InputFormat::Jsonl}};
  app.add_option("--format", format,
                 "auto (.jsonl/.ndjson[.gz|.zst] are JSONL, the rest text), text or jsonl")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "text", "jsonl"}));
  app.add_option("--jsonl-field", o.docs.jsonl_field, "JSONL field holding the text")
      ->capture_default_str();
  const std::map<std::string, TextDocs> text_modes = {
      {"file", TextDocs::File}, {"paragraph", TextDocs::Paragraph}, {"line", TextDocs::Line}};
  app.add_option(
         "--text-docs", text_docs,
         "Documents in text files: file (whole file), paragraph (blank-line separated) or line")
      ->capture_default_str()
      ->check(CLI::IsMember({"file", "paragraph", "line"}));
  app.add_option("--doc-separator", separator,
                 "Text files: a line exactly equal to this separates documents (e.g. %)");
  app.add_option("--val-fraction", o.validation_fraction,
                 "Fraction of documents for the validation split")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "Seed of the validation split and tokenizer sample")
      ->capture_default_str();
  app.add_option("--shard-tokens", o.shard_tokens,
                 "Tokens per shard (documents never straddle shards)")
      ->capture_default_str();
  app.add_option("--max-doc-bytes", o.docs.max_doc_bytes,
                 "Longest document (or line) accepted; a longer one is an error naming it")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  app.add_flag("--no-bos", no_bos, "Do not add BOS before each document");
  app.add_flag("--no-eos", no_eos, "Do not add EOS after each document");
  app.add_option("-j,--threads", threads,
                 "Tokenizer threads, 1 to " + std::to_string(wireup::prep::kMaxThreads) +
                     " (default: every core)");
  app.add_flag("--force", o.force, "Replace a data set already prepared in --output");
  app.add_flag("-q,--quiet", quiet, "No progress or summary");
  app.add_option(
      "--verify", verify,
      "Check a prepared directory (or its manifest.json) against its checksums and exit");
  app.footer(
      "Example: wireup-prep --tokenizer llama2/tokenizer.model --jsonl-field text -o /fsx/data "
      "corpus/");

  // `wireup-prep inspect DATASET`: a subcommand. Command lines without the
  // bare word "inspect" parse as before (an input of that name: ./inspect).
  wireup::prep::InspectOptions inspect;
  std::string inspect_tokenizer;
  auto* inspect_cmd = app.add_subcommand(
      "inspect",
      "Print a prepared data set's facts and its first documents (token ids and decoded text) in "
      "the order the trainer reads them");
  inspect_cmd->add_option("dataset", inspect.dataset, "The prepared directory or its manifest.json")
      ->required();
  inspect_cmd->add_option("--split", inspect.split, "train or validation")
      ->capture_default_str()
      ->check(CLI::IsMember({"train", "validation"}));
  inspect_cmd->add_option("--docs", inspect.docs, "Documents to show, from the split's start")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  inspect_cmd
      ->add_option("--max-tokens", inspect.max_tokens, "Token ids (and their text) per document")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40));
  inspect_cmd->footer("Example: wireup-prep inspect /fsx/data/pile --split validation --docs 5");
  inspect_cmd->add_option("--tokenizer", inspect_tokenizer,
                          "Decode with this tokenizer file (default: the data set's own copy, "
                          "as its manifest records it)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // --help, or a usage error
  }

  try {
    if (inspect_cmd->parsed()) {
      for (const auto* opt : app.get_options())
        if (opt->count() > 0 && opt->get_name() != "--help")
          throw wireup::InputError("inspect takes no " + opt->get_name() +
                                   " (its options: wireup-prep inspect --help)");
      if (!inspect_tokenizer.empty()) inspect.tokenizer = inspect_tokenizer;
      wireup::prep::inspect_dataset(inspect, std::cout);
      return 0;
    }
    if (!verify.empty()) {
      if (!o.inputs.empty() || !o.output.empty())
        throw wireup::InputError("--verify DIR takes no inputs and no --output");
      wireup::prep::verify_dataset(verify);
      if (!quiet) std::cerr << "wireup-prep: " << verify << ": all shards match manifest.json\n";
      return 0;
    }
    if (app.count("--threads") > 0) o.threads = wireup::prep::parse_threads(threads);
    if (!tokenizer.empty()) o.tokenizer = tokenizer;
    o.format = formats.at(format);
    o.docs.text_docs = text_modes.at(text_docs);
    if (app.count("--doc-separator") > 0) o.docs.separator = separator;
    o.add_bos = !no_bos;
    o.add_eos = !no_eos;
    o.progress = !quiet;
    o.log = quiet ? nullptr : &std::cerr;
    o.log_is_terminal = ::isatty(STDERR_FILENO) == 1;
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    wireup::prep::run_prep(o);
    return 0;
  } catch (const wireup::InputError& e) {
    std::cerr << "wireup-prep: error: " << e.what() << "\n";
    if (const int sig = wireup::prep::stop_signal(); sig != 0) return 128 + sig;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "wireup-prep: internal error: " << e.what() << "\n";
    return 1;
  } catch (...) {
    std::cerr << "wireup-prep: internal error: unknown exception\n";
    return 1;
  }
}
