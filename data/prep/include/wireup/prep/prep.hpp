#pragma once
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "wireup/chat/chat_template.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/prep/documents.hpp"
#include "wireup/prep/input_files.hpp"

namespace wireup::prep {

// --chat-template: each JSONL row is a conversation (wireup/chat/conversation.hpp),
// rendered by the template, tokenized with its loss mask into version 2
// shards; the template puts the special tokens, <|begin_of_text|> first
// for Llama 3 (add_bos and add_eos do not apply).
struct ChatPrepOptions {
  chat::TemplateOptions tmpl;
};

struct PrepOptions {
  std::vector<std::string> inputs;  // files or directories
  std::filesystem::path output;
  std::optional<std::filesystem::path> tokenizer;  // else train one of vocab_size
  std::uint32_t vocab_size = 0;
  std::string model_type = "bpe";
  std::uint64_t train_sentences = 2'000'000;  // lines sampled to train a tokenizer
  InputFormat format = InputFormat::Auto;
  DocOptions docs;  // docs.max_doc_bytes: --max-doc-bytes
  double validation_fraction = 0.01;
  std::uint64_t seed = 0;  // validation split and tokenizer-training sample
  std::uint64_t shard_tokens = std::uint64_t{1} << 30;
  bool add_bos = true;
  bool add_eos = true;
  unsigned threads = 0;  // 0: every core (at most kMaxThreads)
  bool force = false;
  bool progress = true;
  std::ostream* log = nullptr;  // progress and summary; nullptr: silent
  bool log_is_terminal = false;
  std::optional<ChatPrepOptions> chat;
  // Chat and preference rows: count and report bad rows instead of stopping
  // at the first.
  bool skip_bad_rows = false;
};

// The most tokenizer threads -j accepts: far more than any machine's cores,
// far fewer than the threads a process may start.
inline constexpr unsigned kMaxThreads = 1024;

// -j's value: a whole number from 1 to kMaxThreads, else InputError.
unsigned parse_threads(const std::string& text);

// Reads, tokenises and writes the data set; returns its manifest. JSONL
// rows with "chosen" and "rejected" make a preference data set
// (docs/wireup-prep-preference.md): conversational pairs need `chat`. On any
// error (InputError naming the file and line) nothing is left in `output`.
data::Manifest run_prep(const PrepOptions& options);

// Whether document `index` (0-based, in input order, empty ones not counted)
// goes to validation: with key = splitmix64's first output for `seed`,
// mix64(key + (index+1) * 0x9e3779b97f4a7c15) / 2^64 < fraction.
bool is_validation(std::uint64_t seed, std::uint64_t index, double fraction);

// Checks every shard and the tokenizer of a prepared directory against its
// manifest (headers, sizes, document index, SHA-256). InputError on the first problem.
void verify_dataset(const std::filesystem::path& dir);

// Called by the SIGINT/SIGTERM handler (async-signal-safe): run_prep stops
// within seconds and removes its staging directory, leaving the output as it
// was. The first signal is kept: stop_signal() returns it (0: none).
void request_stop(int signal);
int stop_signal();

}  // namespace wireup::prep
