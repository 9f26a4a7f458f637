#include "wireup/prep/prep.hpp"

#include <fcntl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <span>
#include <thread>

#include "chat_rows.hpp"
#include "chunk_feed.hpp"
#include "ordered_pool.hpp"
#include "preference_rows.hpp"
#include "progress.hpp"
#include "split_writer.hpp"
#include "staging.hpp"
#include "stop_request.hpp"
#include "tokenizer_setup.hpp"
#include "wireup/data/permutation.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_set.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/sha256.hpp"
#include "wireup/text.hpp"
#include "wireup/tokenizer/tokenizer.hpp"
#include "wireup/version.hpp"

namespace wireup::prep {
namespace fs = std::filesystem;
namespace {

// Text goes to the tokenizer in pieces of at most this much (see
// Tokenizer::encode_pieces): SentencePiece's memory for one call grows with
// its text, and a stop request is seen between pieces.
constexpr std::size_t kPieceBytes = std::size_t{64} << 10;

void check_options(const PrepOptions& o) {
  if (o.output.empty()) throw InputError("--output: expected a directory for the shards");
  if (o.threads > kMaxThreads)
    throw InputError("-j/--threads " + std::to_string(o.threads) +
                     ": expected a whole number from 1 to " + std::to_string(kMaxThreads));
  if (o.tokenizer.has_value() == (o.vocab_size > 0))
    throw InputError(
        "expected exactly one of --tokenizer FILE (an existing tokenizer: SentencePiece, "
        "tiktoken or tokenizer.json) "
        "or --vocab-size N (train one on the input)");
  if (!(o.validation_fraction >= 0.0 && o.validation_fraction < 1.0))
    throw InputError("--val-fraction " + std::to_string(o.validation_fraction) +
                     ": expected a number in [0, 1)");
  if (o.shard_tokens == 0) throw InputError("--shard-tokens: expected at least 1");
  if (o.docs.jsonl_field.empty()) throw InputError("--jsonl-field: expected a field name");
  if (o.chat && !o.tokenizer)
    throw InputError(
        "--chat-template needs --tokenizer: Llama 3's tokenizer.model or "
        "tokenizer.json (a tokenizer trained with --vocab-size has no chat tokens)");
}

// Preference rows need a tokenizer file; --skip-bad-rows is for rows.
void check_row_options(const PrepOptions& o, chat::RowKind kind,
                       const std::vector<InputFile>& files) {
  const bool pairs = kind != chat::RowKind::NotPair;
  if (pairs && !o.tokenizer)
    throw InputError(files.front().path.string() +
                     ": preference pairs (rows with 'chosen' and 'rejected') need --tokenizer "
                     "(the model's tokenizer.json or tokenizer.model)");
  if (kind == chat::RowKind::ConversationalPair && !o.chat)
    throw InputError(files.front().path.string() +
                     ": its first row is a conversational pair (lists of messages), which needs "
                     "--chat-template (llama3, llama3.1, qwen2.5 or qwen3)");
  if (o.skip_bad_rows && !pairs && !o.chat)
    throw InputError(
        "--skip-bad-rows applies to chat rows (--chat-template) and preference rows (with "
        "'chosen' and 'rejected'); " +
        (files.empty() ? std::string("there is no input")
                       : files.front().path.string() + "'s first row is neither"));
}

// --chat-template: the template puts its tokens, nothing is added; the
// manifest's add_bos says whether each conversation starts with BOS (the
// Llama 3 templates' <|begin_of_text|>; the Qwen templates have none).
PrepOptions normalized(const PrepOptions& options) {
  PrepOptions o = options;
  if (o.chat) {
    const auto t = o.chat->tmpl.chat_template;
    o.add_bos = t == chat::Template::Llama3 || t == chat::Template::Llama31;
    o.add_eos = false;
  }
  return o;
}

// A whole file in the staging directory (Staging::commit fsyncs it).
void write_file(const fs::path& p, const std::string& bytes) {
  const io::Fd fd = io::open_file(p, O_WRONLY | O_CREAT | O_TRUNC);
  io::write_all(fd.get(), bytes.data(), bytes.size(), p);
}

std::string mb(std::uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return b;
}

// What tokenizing the input gave, besides the shards.
struct Tokenized {
  std::vector<data::InputEntry> inputs;
  std::uint64_t documents = 0, tokens = 0;
  std::uint64_t rough_cuts = 0;  // long documents cut outside a word boundary
  BadRows bad_rows;              // --chat-template --skip-bad-rows
  SkippedPairs skipped_pairs;    // preference rows --skip-bad-rows left out
  SkippedPairs unencoded_pairs;  // ... counted by the writing thread, merged at the end
};

// What the rows are and how they become ids: documents (neither encoder),
// conversations (chat) or preference pairs (pairs).
struct RowEncoders {
  const chat::ChatEncoder* chat = nullptr;
  const chat::PairEncoder* pairs = nullptr;
};

// On a pool thread: a chunk's texts to tokens, BOS and EOS added.
void encode_chunk(Chunk& c, const RunTokenizer& tok, const PrepOptions& o) {
  const auto append = [&c](const std::vector<int>& ids) {
    for (const int id : ids) c.tokens.push_back(static_cast<std::uint32_t>(id));
  };
  for (const auto& text : c.texts) {
    const std::size_t before = c.tokens.size();
    if (o.add_bos) c.tokens.push_back(tok.bos);
    c.rough_cuts += tok.model->encode_pieces(text, kPieceBytes, append, check_stop);
    if (o.add_eos) c.tokens.push_back(tok.eos);
    c.lengths.push_back(c.tokens.size() - before);
  }
  c.texts.clear();
  c.texts.shrink_to_fit();
}

// On the writing thread, in input order: a chunk's documents to their split.
void write_chunk(const Chunk& c, SplitWriter& train, SplitWriter& validation, Tokenized& out) {
  std::size_t at = 0;
  for (std::size_t i = 0; i < c.lengths.size(); ++i) {
    const std::span<const std::uint32_t> doc(c.tokens.data() + at, c.lengths[i]);
    const auto mask = c.mask.empty()
                          ? std::span<const std::uint8_t>()
                          : std::span<const std::uint8_t>(c.mask.data() + at, doc.size());
    at += c.lengths[i];
    if (doc.empty()) continue;  // no BOS/EOS and text that encodes to nothing
    (c.validation[i] != 0 ? validation : train).add(doc, mask);
    ++out.documents;
    out.tokens += doc.size();
  }
  out.rough_cuts += c.rough_cuts;
}

// Every input's documents, in input order, to the pool in chunks (each
// marked train or validation); returns the manifest's list of inputs.
std::vector<data::InputEntry> read_documents(const std::vector<InputFile>& files,
                                             const PrepOptions& o, OrderedPool& pool) {
  Document doc;
  return feed_chunks(files, o, pool, [&](DocumentReader& reader, const InputFile&, Chunk& chunk) {
    if (!reader.next(doc)) return false;
    chunk.text_bytes += doc.text.size();
    chunk.texts.push_back(std::move(doc.text));
    return true;
  });
}

unsigned thread_count(const PrepOptions& o) {
  return o.threads > 0 ? o.threads
                       : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
}

// Tokenises on every core and writes the shards in input order from one
// thread: the output does not depend on thread timing.
Tokenized tokenize_inputs(const PrepOptions& o, const std::vector<InputFile>& files,
                          const RunTokenizer& tok, RowEncoders rows, Progress& progress,
                          SplitWriter& train, SplitWriter& validation) {
  Tokenized out;
  const auto encode = [&](Chunk& c) {
    if (rows.pairs != nullptr)
      encode_pairs(c, *rows.pairs);
    else if (rows.chat != nullptr)
      encode_conversations(c, *rows.chat);
    else
      encode_chunk(c, tok, o);
  };
  const auto sink = [&](Chunk& c) {
    if (rows.pairs != nullptr) {
      out.documents += 2 * write_pairs(c, train, validation, out.unencoded_pairs, o.skip_bad_rows);
      out.tokens += c.tokens.size();
    } else {
      write_chunk(c, train, validation, out);
    }
    progress.update("tokenizing", c.bytes_read, out.documents, out.tokens);
    check_stop();
  };
  std::vector<data::InputEntry> inputs;
  {
    OrderedPool pool(thread_count(o), encode, sink);
    if (rows.pairs != nullptr)
      inputs = read_pairs(files, o, pool, out.skipped_pairs, o.chat.has_value());
    else if (rows.chat != nullptr)
      inputs = read_conversations(files, o, pool, out.bad_rows);
    else
      inputs = read_documents(files, o, pool);
    pool.finish();
  }
  out.inputs = std::move(inputs);
  out.skipped_pairs.merge(out.unencoded_pairs);
  check_stop();
  train.close();
  validation.close();
  progress.done();
  return out;
}

// An empty corpus, or a split the options leave empty, is an error.
void check_splits(const PrepOptions& o, std::size_t files, std::uint64_t documents,
                  const SplitWriter& train, const SplitWriter& validation) {
  if (documents == 0)
    throw InputError("empty corpus: the " + std::to_string(files) +
                     " input file(s) hold no non-blank document");
  if (train.split().shards.empty())
    throw InputError("the train split is empty: all " + std::to_string(documents) +
                     " documents went to validation (lower --val-fraction)");
  if (o.validation_fraction > 0 && validation.split().shards.empty())
    throw InputError("the validation split is empty: --val-fraction " +
                     std::to_string(o.validation_fraction) + " picked none of " +
                     std::to_string(documents) +
                     " documents (raise it, add input, or pass --val-fraction 0)");
}

data::Manifest make_manifest(const PrepOptions& o, const RunTokenizer& tok,
                             const SplitWriter& train, const SplitWriter& validation,
                             std::vector<data::InputEntry> inputs, const Tokenized& done,
                             bool pairs) {
  data::Manifest m;
  m.token_bytes = data::token_bytes_for_vocab(tok.entry.vocab_size);
  m.tokenizer = tok.entry;
  m.add_bos = o.add_bos;
  m.add_eos = o.add_eos;
  m.train = train.split();
  m.validation = validation.split();
  m.validation_fraction = o.validation_fraction;
  m.split_seed = o.seed;
  m.inputs = std::move(inputs);
  m.created_by = std::string("wireup-prep ") + kVersion;
  const auto* t = o.chat ? &o.chat->tmpl : nullptr;
  const std::string date =
      t != nullptr && t->chat_template == chat::Template::Llama31 ? t->date_string : "";
  if (pairs) {
    // Conversational pairs: the template's tokens only; text pairs: the
    // tokenizer's BOS (when it has one) and EOS.
    const bool conversational = t != nullptr;  // text pairs run without the template
    m.preference = data::PreferenceEntry{
        conversational ? "conversational" : "text",
        conversational ? chat::template_name(t->chat_template) : "", conversational ? date : "",
        done.skipped_pairs.count, done.skipped_pairs.by_reason};
    m.add_bos = conversational ? (t->chat_template == chat::Template::Llama3 ||
                                  t->chat_template == chat::Template::Llama31)
                               : tok.bos != data::kNoToken;
    m.add_eos = !conversational;
  } else if (t != nullptr) {
    m.chat = data::ChatEntry{chat::template_name(t->chat_template), date,
                             chat::train_on_name(t->train_on), done.bad_rows.count};
  }
  return m;
}

// The files the data set consists of, the manifest apart.
std::vector<std::string> data_files(const RunTokenizer& tok, const SplitWriter& train,
                                    const SplitWriter& validation) {
  std::vector<std::string> names = {tok.entry.file};
  names.insert(names.end(), train.names().begin(), train.names().end());
  names.insert(names.end(), validation.names().begin(), validation.names().end());
  return names;
}

// --chat-template: the template, the mask rule, what it trains, bad rows.
void log_chat(std::ostream& log, const data::Manifest& m, const BadRows& bad) {
  const auto& c = *m.chat;
  const std::uint64_t tokens = m.train.tokens() + m.validation.tokens();
  const std::uint64_t trained = m.train.trained_tokens() + m.validation.trained_tokens();
  char line[512];
  std::snprintf(
      line, sizeof line,
      "wireup-prep: chat template %s, train on %s: %llu conversations, %llu tokens, "
      "%llu trained (%.1f%%)",
      c.chat_template.c_str(), c.train_on.c_str(),
      static_cast<unsigned long long>(m.train.documents() + m.validation.documents()),
      static_cast<unsigned long long>(tokens), static_cast<unsigned long long>(trained),
      tokens > 0 ? 100.0 * static_cast<double>(trained) / static_cast<double>(tokens) : 0.0);
  log << line << "\n";
  if (bad.count > 0)
    log << "wireup-prep: skipped " << bad.count
        << " bad row(s) (--skip-bad-rows); the first: " << bad.first << "\n";
}

// Preference pairs: their format, counts, what was skipped and why.
void log_pairs(std::ostream& log, const data::Manifest& m, const SkippedPairs& skipped) {
  const auto& p = *m.preference;
  log << "wireup-prep: preference pairs (" << p.format
      << (p.chat_template.empty() ? "" : ", chat template " + p.chat_template)
      << "): " << (m.train.documents() + m.validation.documents()) / 2 << " pairs, "
      << m.train.tokens() + m.validation.tokens() << " tokens, "
      << m.train.trained_tokens() + m.validation.trained_tokens() << " in completions\n";
  if (skipped.count == 0) return;
  log << "wireup-prep: skipped " << skipped.count << " bad row(s) (--skip-bad-rows):";
  for (const auto& [reason, n] : skipped.by_reason) log << " " << reason << "=" << n;
  log << "; the first: " << skipped.first << "\n";
}

void log_summary(std::ostream& log, const PrepOptions& o, const data::Manifest& m,
                 std::uint64_t input_bytes, std::uint64_t rough_cuts, double secs) {
  char line[512];
  std::snprintf(line, sizeof line,
                "wireup-prep: %s of input -> train %llu tokens, %llu documents in %zu shard(s); "
                "validation %llu tokens, %llu documents in %zu shard(s); vocabulary %u "
                "(%u-byte tokens); %.1f s",
                mb(input_bytes).c_str(), static_cast<unsigned long long>(m.train.tokens()),
                static_cast<unsigned long long>(m.train.documents()), m.train.shards.size(),
                static_cast<unsigned long long>(m.validation.tokens()),
                static_cast<unsigned long long>(m.validation.documents()),
                m.validation.shards.size(), m.tokenizer.vocab_size, m.token_bytes, secs);
  if (rough_cuts > 0)
    log << "wireup-prep: note: " << rough_cuts << " cut(s) of long documents fell outside a "
        << "word boundary (" << kPieceBytes << " bytes without a space); the tokens next to "
        << "them may differ from encoding the document whole\n";
  log << line << "\n"
      << "wireup-prep: wrote " << (o.output / data::kManifestName).string() << std::endl;
}

}  // namespace

unsigned parse_threads(const std::string& text) {
  const auto n = parse_uint(trim(text), kMaxThreads);
  if (!n || *n == 0)
    throw InputError("-j/--threads " + wireup::quoted(text) +
                     ": expected a whole number from 1 to " + std::to_string(kMaxThreads));
  return static_cast<unsigned>(*n);
}

bool is_validation(std::uint64_t seed, std::uint64_t index, double fraction) {
  if (fraction <= 0.0) return false;
  // splitmix64's sequence for a key drawn from the seed: index 0 of seed 0
  // must not hash to 0 (mix64(0) == 0).
  std::uint64_t state = seed;
  const std::uint64_t key = data::splitmix64_next(state);
  const std::uint64_t h = data::mix64(key + (index + 1) * 0x9e3779b97f4a7c15ULL);
  return static_cast<double>(h >> 11) * 0x1.0p-53 < fraction;
}

data::Manifest run_prep(const PrepOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(options);
  const auto files = list_inputs(options.inputs, options.format, options.output);
  // Text pairs are read as TRL reads them, without a chat template.
  const chat::RowKind kind = first_row_kind(files, options);
  const bool pairs = kind != chat::RowKind::NotPair;
  PrepOptions o = options;
  if (kind == chat::RowKind::TextPair) o.chat.reset();
  o = normalized(o);
  check_row_options(o, kind, files);
  std::uint64_t input_bytes = 0;
  for (const auto& f : files) input_bytes += f.bytes;
  Progress progress(o.log != nullptr ? *o.log : std::cerr, o.progress && o.log != nullptr,
                    o.log_is_terminal, input_bytes);
  Staging staging(o.output, o.force);
  const StopWatchdog watchdog(staging);

  const RunTokenizer tok = setup_tokenizer(o, files, progress);
  if (tok.bos == data::kNoToken) o.add_bos = false;  // --no-bos, or the tokenizer has none
  write_file(staging.file(tok.entry.file), tok.model->model_bytes());

  std::optional<chat::ChatEncoder> chat;
  if (o.chat) chat.emplace(*tok.model, tok.name, o.chat->tmpl);
  std::optional<chat::PairEncoder> pair_encoder;
  if (pairs) pair_encoder.emplace(*tok.model, chat ? &*chat : nullptr);
  const auto vocab = tok.entry.vocab_size;
  const bool masked = o.chat.has_value() || pairs;
  SplitWriter train(staging, "train", vocab, tok.bos, tok.eos, o.shard_tokens, masked);
  SplitWriter validation(staging, "validation", vocab, tok.bos, tok.eos, o.shard_tokens, masked);
  Tokenized done = tokenize_inputs(
      o, files, tok, {chat ? &*chat : nullptr, pair_encoder ? &*pair_encoder : nullptr}, progress,
      train, validation);
  check_splits(o, files.size(), done.documents, train, validation);

  const data::Manifest m =
      make_manifest(o, tok, train, validation, std::move(done.inputs), done, pairs);
  write_file(staging.file(std::string(data::kManifestName)), data::manifest_to_json(m));
  check_stop();
  staging.commit(data_files(tok, train, validation), std::string(data::kManifestName));

  if (o.log != nullptr) {
    if (m.chat) log_chat(*o.log, m, done.bad_rows);
    if (m.preference) log_pairs(*o.log, m, done.skipped_pairs);
    log_summary(*o.log, o, m, input_bytes, done.rough_cuts,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return m;
}

namespace {

// A version 2 shard's mask: as many bits set as its header says.
void verify_mask(const data::ShardFile& shard) {
  if (!shard.header().has_mask()) return;
  std::vector<std::uint8_t> mask(std::size_t{1} << 20);
  const auto n = shard.header().token_count;
  std::uint64_t trained = 0;
  for (std::uint64_t at = 0; at < n; at += mask.size()) {
    const auto count = std::min<std::uint64_t>(mask.size(), n - at);
    shard.read_mask(at, count, mask.data());
    for (std::uint64_t i = 0; i < count; ++i) trained += mask[i];
  }
  if (trained != shard.header().trained_count)
    throw InputError(shard.path().string() + ": the loss mask trains " + std::to_string(trained) +
                     " tokens but the header says " + std::to_string(shard.header().trained_count));
}

}  // namespace

void verify_dataset(const fs::path& dir_or_manifest) {
  const auto file = data::manifest_path(dir_or_manifest);
  const auto m = data::load_manifest(file);
  auto dir = file.parent_path();
  if (dir.empty()) dir = ".";
  const auto tok_path = dir / m.tokenizer.file;
  if (wireup::sha256_hex(io::read_text(tok_path, tokenizer::Tokenizer::kMaxTokenizerBytes)) !=
      m.tokenizer.sha256)
    throw InputError(tok_path.string() + ": SHA-256 does not match the manifest");
  for (const auto& [name, split] : {std::pair{"train", &m.train}, {"validation", &m.validation}}) {
    if (split->shards.empty()) continue;
    const data::ShardSet set(dir, m, *split, name, data::ReadMode::Pread, data::Verify::All);
    for (const auto& shard : set.shards()) {
      shard.doc_offsets();
      verify_mask(shard);
      std::vector<std::uint32_t> buf(std::size_t{1} << 20);
      const auto n = shard.header().token_count;
      for (std::uint64_t at = 0; at < n; at += buf.size()) {
        const auto count = std::min<std::uint64_t>(buf.size(), n - at);
        shard.read_tokens(at, count, buf.data());
        for (std::uint64_t i = 0; i < count; ++i)
          if (buf[i] >= m.tokenizer.vocab_size)
            throw InputError(shard.path().string() + ": token " + std::to_string(at + i) +
                             " has id " + std::to_string(buf[i]) + ", outside the vocabulary");
      }
    }
  }
}

}  // namespace wireup::prep
