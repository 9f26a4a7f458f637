#include "tokenizer_setup.hpp"

#include <ostream>
#include <utility>

#include "stop_request.hpp"
#include "wireup/data/permutation.hpp"
#include "wireup/error.hpp"
#include "wireup/prep/documents.hpp"
#include "wireup/sha256.hpp"
#include "wireup/text.hpp"

namespace wireup::prep {
namespace {

using tokenizer::Tokenizer;

// Reservoir sample of non-blank lines for tokenizer training; deterministic
// from the seed. Also checks the input once before training starts.
std::vector<std::string> sample_sentences(const std::vector<InputFile>& files, const PrepOptions& o,
                                          Progress& progress) {
  std::vector<std::string> sample;
  std::uint64_t seen = 0, docs = 0, bytes_before = 0;
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

Tokenizer train_on_input(const PrepOptions& o, const std::vector<InputFile>& files,
                         Progress& progress, const std::string& name) {
  const auto sentences = sample_sentences(files, o, progress);
  progress.done();
  if (sentences.empty())
    throw InputError("empty corpus: no text in the " + std::to_string(files.size()) +
                     " input file(s) to train a tokenizer on");
  if (o.log != nullptr)
    *o.log << "wireup-prep: training a " << o.model_type << " SentencePiece model, vocabulary "
           << o.vocab_size << ", on " << sentences.size() << " lines" << std::endl;
  return Tokenizer::from_bytes(
      tokenizer::train_sentencepiece(sentences, {o.vocab_size, o.model_type}), name);
}

std::uint32_t special_id(int id, bool wanted, const char* what, const char* flag,
                         const std::string& tokenizer) {
  if (!wanted) return data::kNoToken;
  if (id < 0)
    throw InputError(tokenizer + ": the model has no " + what + " piece; pass " + flag +
                     " or use a model that defines one");
  return static_cast<std::uint32_t>(id);
}

}  // namespace

RunTokenizer setup_tokenizer(const PrepOptions& o, const std::vector<InputFile>& files,
                             Progress& progress) {
  RunTokenizer t;
  if (o.tokenizer) {
    t.name = "tokenizer " + wireup::quoted(o.tokenizer->string());
    t.model.emplace(Tokenizer::load(*o.tokenizer));
    t.entry.source = o.tokenizer->string();
  } else {
    t.name = "trained tokenizer";
    t.model.emplace(train_on_input(o, files, progress, t.name));
    t.entry.source = "trained";
  }
  check_stop();
  const Tokenizer& model = *t.model;
  // A tokenizer that defines no BOS (Qwen's, cl100k_base: Hugging Face's
  // add_bos_token false) starts documents without one.
  t.bos = special_id(model.bos_id(), o.add_bos && model.bos_id() >= 0, "BOS", "--no-bos", t.name);
  t.eos = special_id(model.eos_id(), o.add_eos, "EOS", "--no-eos", t.name);
  t.entry.type = model.type_name();
  t.entry.file = model.file_name();
  t.entry.vocab_size = model.vocab_size();
  t.entry.bos_id = model.bos_id();
  t.entry.eos_id = model.eos_id();
  t.entry.sha256 = wireup::sha256_hex(model.model_bytes());
  return t;
}

}  // namespace wireup::prep
