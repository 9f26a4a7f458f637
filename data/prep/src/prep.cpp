#include "wireup/prep/prep.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <span>
#include <system_error>
#include <thread>

#include "ordered_pool.hpp"
#include "progress.hpp"
#include "staging.hpp"
#include "wireup/data/permutation.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_set.hpp"
#include "wireup/data/shard_writer.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"
#include "wireup/text.hpp"
#include "wireup/tokenizer/tokenizer.hpp"
#include "wireup/version.hpp"

namespace wireup::prep {
namespace fs = std::filesystem;
using tokenizer::Tokenizer;
namespace {

std::atomic<int> g_stop_signal{0};

void check_stop() {
  if (g_stop_signal.load(std::memory_order_relaxed) != 0)
    throw InputError("interrupted; output removed");
}

// Text goes to the tokenizer in pieces of at most this much (see
// Tokenizer::encode_pieces): SentencePiece's memory for one call grows with
// its text, and a stop request is seen between pieces.
constexpr std::size_t kPieceBytes = std::size_t{64} << 10;

// How long a stop request may take to unwind before the staging directory
// is removed and the process ends at once (e.g. inside tokenizer training,
// which cannot be interrupted).
constexpr auto kStopGrace = std::chrono::seconds(3);

// Watches for a stop request while a run holds `staging`: once one has
// waited kStopGrace without the run ending, removes the staging directory
// (unless the data set was already committed) and exits 128 + signal.
class StopWatchdog {
 public:
  explicit StopWatchdog(Staging& staging) : thread_([this, &staging] { watch(staging); }) {}
  ~StopWatchdog() {
    {
      const std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  StopWatchdog(const StopWatchdog&) = delete;
  StopWatchdog& operator=(const StopWatchdog&) = delete;

 private:
  void watch(Staging& staging) {
    std::unique_lock lock(mu_);
    // A signal handler can only set an atomic: poll it.
    while (!done_ && g_stop_signal.load() == 0) cv_.wait_for(lock, std::chrono::milliseconds(100));
    if (done_ || cv_.wait_for(lock, kStopGrace, [&] { return done_; })) return;
    if (!staging.abandon()) return;  // committed: the run completes
    static constexpr char kMsg[] = "wireup-prep: error: interrupted; output removed\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
    ::_exit(128 + g_stop_signal.load());
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// The shards of one split: a new shard starts when the next document would
// push the current one past shard_tokens (documents never straddle shards).
class SplitWriter {
 public:
  SplitWriter(const Staging& staging, std::string prefix, std::uint32_t vocab, std::uint32_t bos,
              std::uint32_t eos, std::uint64_t shard_tokens)
      : staging_(staging),
        prefix_(std::move(prefix)),
        vocab_(vocab),
        bos_(bos),
        eos_(eos),
        shard_tokens_(shard_tokens) {}

  void add(std::span<const std::uint32_t> doc) {
    if (writer_ && writer_->token_count() > 0 &&
        writer_->token_count() + doc.size() > shard_tokens_)
      close();
    if (!writer_) {
      char name[64];
      std::snprintf(name, sizeof name, "%s-%05zu.bin", prefix_.c_str(), names_.size());
      names_.emplace_back(name);
      writer_ = std::make_unique<data::ShardWriter>(staging_.file(name), vocab_, bos_, eos_);
    }
    writer_->add_document(doc);
  }

  void close() {
    if (!writer_) return;
    data::ShardEntry e;
    e.file = names_.back();
    e.tokens = writer_->token_count();
    e.documents = writer_->doc_count();
    e.sha256 = writer_->finish();
    e.bytes = writer_->file_bytes();
    split_.shards.push_back(std::move(e));
    writer_.reset();
  }

  const data::SplitEntry& split() const { return split_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  const Staging& staging_;
  std::string prefix_;
  std::uint32_t vocab_, bos_, eos_;
  std::uint64_t shard_tokens_;
  std::unique_ptr<data::ShardWriter> writer_;
  std::vector<std::string> names_;
  data::SplitEntry split_;
};

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
}

// Reservoir sample of non-blank lines for tokenizer training; deterministic
// from the seed. Also checks the input once before training starts.
std::vector<std::string> sample_sentences(const std::vector<InputFile>& files, const PrepOptions& o,
                                          Progress& progress, std::uint64_t& bytes_before) {
  std::vector<std::string> sample;
  std::uint64_t seen = 0, docs = 0;
  std::uint64_t rng = data::mix64(o.seed ^ 0x7472616e73656e74ULL);
  Document doc;
  for (const auto& f : files) {
    DocumentReader reader(f, o.docs);
    while (reader.next(doc)) {
      check_stop();
      ++docs;
      std::size_t start = 0;
      while (start <= doc.text.size()) {
        auto end = doc.text.find('\n', start);
        if (end == std::string::npos) end = doc.text.size();
        std::string line = doc.text.substr(start, end - start);
        start = end + 1;
        if (blank(line)) continue;
        if (sample.size() < o.train_sentences) {
          sample.push_back(std::move(line));
        } else {
          const auto j = data::splitmix64_next(rng) % (seen + 1);
          if (j < sample.size()) sample[j] = std::move(line);
        }
        ++seen;
      }
      progress.update("sampling", bytes_before + reader.raw_offset(), docs, 0);
    }
    bytes_before += f.bytes;
  }
  return sample;
}

std::uint32_t special_id(int id, bool wanted, const char* what, const char* flag,
                         const std::string& tokenizer) {
  if (!wanted) return data::kNoToken;
  if (id < 0)
    throw InputError(tokenizer + ": the model has no " + what + " piece; pass " + flag +
                     " or use a model that defines one");
  return static_cast<std::uint32_t>(id);
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw InputError(p.string() + ": cannot write");
}

std::string mb(std::uint64_t bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return b;
}

}  // namespace

void request_stop(int signal) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, signal);
}

int stop_signal() { return g_stop_signal.load(); }

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

data::Manifest run_prep(const PrepOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_options(o);
  const auto files = list_inputs(o.inputs, o.format, o.output);
  std::uint64_t total_bytes = 0;
  for (const auto& f : files) total_bytes += f.bytes;
  const unsigned threads =
      o.threads > 0 ? o.threads : std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  std::ostream* log = o.log;
  Progress progress(log != nullptr ? *log : std::cerr, o.progress && log != nullptr,
                    o.log_is_terminal, total_bytes);

  Staging staging(o.output, o.force);
  const StopWatchdog watchdog(staging);

  // Tokenizer: the given model, or one trained on a sample of the input.
  std::string tokenizer_name;
  std::optional<Tokenizer> tok;
  data::TokenizerEntry tok_entry;
  if (o.tokenizer) {
    tokenizer_name = "tokenizer " + wireup::quoted(o.tokenizer->string());
    tok.emplace(Tokenizer::load(*o.tokenizer));
    tok_entry.source = o.tokenizer->string();
  } else {
    std::uint64_t before = 0;
    auto sentences = sample_sentences(files, o, progress, before);
    progress.done();
    if (sentences.empty())
      throw InputError("empty corpus: no text in the " + std::to_string(files.size()) +
                       " input file(s) to train a tokenizer on");
    if (log != nullptr)
      *log << "wireup-prep: training a " << o.model_type << " SentencePiece model, vocabulary "
           << o.vocab_size << ", on " << sentences.size() << " lines" << std::endl;
    tokenizer_name = "trained tokenizer";
    tok.emplace(Tokenizer::from_bytes(
        tokenizer::train_sentencepiece(sentences, {o.vocab_size, o.model_type}), tokenizer_name));
    tok_entry.source = "trained";
  }
  check_stop();
  const std::uint32_t vocab = tok->vocab_size();
  const std::uint32_t bos = special_id(tok->bos_id(), o.add_bos, "BOS", "--no-bos", tokenizer_name);
  const std::uint32_t eos = special_id(tok->eos_id(), o.add_eos, "EOS", "--no-eos", tokenizer_name);
  tok_entry.type = tok->type_name();
  tok_entry.file = tok->file_name();
  tok_entry.vocab_size = vocab;
  tok_entry.bos_id = tok->bos_id();
  tok_entry.eos_id = tok->eos_id();
  tok_entry.sha256 = wireup::sha256_hex(tok->model_bytes());
  write_file(staging.file(tok_entry.file), tok->model_bytes());

  // Tokenise on every core; write in input order from one thread.
  SplitWriter train(staging, "train", vocab, bos, eos, o.shard_tokens);
  SplitWriter validation(staging, "validation", vocab, bos, eos, o.shard_tokens);
  std::uint64_t docs_written = 0, tokens_written = 0, rough_cuts = 0;
  const auto encode = [&](Chunk& c) {
    const auto append = [&c](const std::vector<int>& ids) {
      for (const int id : ids) c.tokens.push_back(static_cast<std::uint32_t>(id));
    };
    for (const auto& text : c.texts) {
      const std::size_t before = c.tokens.size();
      if (o.add_bos) c.tokens.push_back(bos);
      c.rough_cuts += tok->encode_pieces(text, kPieceBytes, append, check_stop);
      if (o.add_eos) c.tokens.push_back(eos);
      c.lengths.push_back(c.tokens.size() - before);
    }
    c.texts.clear();
    c.texts.shrink_to_fit();
  };
  const auto sink = [&](Chunk& c) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < c.lengths.size(); ++i) {
      const std::span<const std::uint32_t> doc(c.tokens.data() + at, c.lengths[i]);
      at += c.lengths[i];
      if (doc.empty()) continue;  // no BOS/EOS and text that encodes to nothing
      (c.validation[i] != 0 ? validation : train).add(doc);
      ++docs_written;
      tokens_written += doc.size();
    }
    rough_cuts += c.rough_cuts;
    progress.update("tokenizing", c.bytes_read, docs_written, tokens_written);
    check_stop();
  };

  std::vector<data::InputEntry> inputs;
  {
    OrderedPool pool(threads, encode, sink);
    std::uint64_t index = 0, bytes_before = 0;
    Chunk chunk;
    Document doc;
    for (const auto& f : files) {
      DocumentReader reader(f, o.docs);
      std::uint64_t file_docs = 0;
      while (reader.next(doc)) {
        check_stop();
        chunk.text_bytes += doc.text.size();
        chunk.validation.push_back(is_validation(o.seed, index++, o.validation_fraction) ? 1 : 0);
        chunk.texts.push_back(std::move(doc.text));
        ++file_docs;
        if (chunk.text_bytes >= kChunkBytes || chunk.texts.size() >= kChunkDocs) {
          chunk.bytes_read = bytes_before + reader.raw_offset();
          pool.push(std::move(chunk));
          chunk = Chunk{};
        }
      }
      bytes_before += f.bytes;
      inputs.push_back({f.path.string(), f.bytes, file_docs});
    }
    if (!chunk.texts.empty()) {
      chunk.bytes_read = bytes_before;
      pool.push(std::move(chunk));
    }
    pool.finish();
  }
  check_stop();
  train.close();
  validation.close();
  progress.done();

  if (docs_written == 0)
    throw InputError("empty corpus: the " + std::to_string(files.size()) +
                     " input file(s) hold no non-blank document");
  if (train.split().shards.empty())
    throw InputError("the train split is empty: all " + std::to_string(docs_written) +
                     " documents went to validation (lower --val-fraction)");
  if (o.validation_fraction > 0 && validation.split().shards.empty())
    throw InputError("the validation split is empty: --val-fraction " +
                     std::to_string(o.validation_fraction) + " picked none of " +
                     std::to_string(docs_written) +
                     " documents (raise it, add input, or pass --val-fraction 0)");

  data::Manifest m;
  m.token_bytes = data::token_bytes_for_vocab(vocab);
  m.tokenizer = tok_entry;
  m.add_bos = o.add_bos;
  m.add_eos = o.add_eos;
  m.train = train.split();
  m.validation = validation.split();
  m.validation_fraction = o.validation_fraction;
  m.split_seed = o.seed;
  m.inputs = std::move(inputs);
  m.created_by = std::string("wireup-prep ") + kVersion;
  write_file(staging.file(std::string(data::kManifestName)), data::manifest_to_json(m));

  std::vector<std::string> names = {tok_entry.file};
  names.insert(names.end(), train.names().begin(), train.names().end());
  names.insert(names.end(), validation.names().begin(), validation.names().end());
  check_stop();
  staging.commit(names, std::string(data::kManifestName));

  if (log != nullptr) {
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char line[512];
    std::snprintf(line, sizeof line,
                  "wireup-prep: %s of input -> train %llu tokens, %llu documents in %zu shard(s); "
                  "validation %llu tokens, %llu documents in %zu shard(s); vocabulary %u "
                  "(%u-byte tokens); %.1f s",
                  mb(total_bytes).c_str(), static_cast<unsigned long long>(m.train.tokens()),
                  static_cast<unsigned long long>(m.train.documents()), m.train.shards.size(),
                  static_cast<unsigned long long>(m.validation.tokens()),
                  static_cast<unsigned long long>(m.validation.documents()),
                  m.validation.shards.size(), vocab, m.token_bytes, secs);
    if (rough_cuts > 0)
      *log << "wireup-prep: note: " << rough_cuts << " cut(s) of long documents fell outside a "
           << "word boundary (" << kPieceBytes << " bytes without a space); the tokens next to "
           << "them may differ from encoding the document whole\n";
    *log << line << "\n"
         << "wireup-prep: wrote " << (o.output / data::kManifestName).string() << std::endl;
  }
  return m;
}

void verify_dataset(const fs::path& dir_or_manifest) {
  const auto file = data::manifest_path(dir_or_manifest);
  const auto m = data::load_manifest(file);
  auto dir = file.parent_path();
  if (dir.empty()) dir = ".";
  const auto tok_path = dir / m.tokenizer.file;
  if (wireup::sha256_file(tok_path) != m.tokenizer.sha256)
    throw InputError(tok_path.string() + ": SHA-256 does not match the manifest");
  for (const auto& [name, split] : {std::pair{"train", &m.train}, {"validation", &m.validation}}) {
    if (split->shards.empty()) continue;
    const data::ShardSet set(dir, m, *split, name, data::ReadMode::Pread, data::Verify::All);
    for (const auto& shard : set.shards()) {
      shard.doc_offsets();
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
