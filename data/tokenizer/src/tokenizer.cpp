#include "wireup/tokenizer/tokenizer.hpp"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <unordered_map>
#include <utility>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"
#include "wireup/sha256.hpp"
#include "wireup/text.hpp"
#include "wireup/tokenizer/bpe_tokenizer.hpp"
#include "wireup/tokenizer/hf_tokenizer_json.hpp"
#include "wireup/tokenizer/known_vocabularies.hpp"
#include "wireup/tokenizer/text_pieces.hpp"
#include "wireup/tokenizer/tiktoken_file.hpp"

namespace wireup::tokenizer {

struct Tokenizer::Impl {
  Kind kind = Kind::SentencePiece;
  sentencepiece::SentencePieceProcessor sp;
  std::optional<BpeTokenizer> bpe;
  std::string bytes;
};

namespace {

constexpr const char* kExpected =
    "expected a SentencePiece model (Llama 2's tokenizer.model), a tiktoken BPE file (Llama 3's "
    "tokenizer.model) or a Hugging Face tokenizer.json with a byte-level BPE model";

BpeSpec tiktoken_spec(std::string_view bytes, const std::string& name) {
  BpeSpec spec;
  spec.tokens = parse_tiktoken(bytes, name);
  const auto sha = wireup::sha256_hex(bytes);
  const KnownVocabulary* known = find_known_vocabulary(sha);
  if (known == nullptr) {
    std::string names;
    for (const auto& k : known_vocabularies())
      names += (names.empty() ? "" : ", ") + std::string(k.name) + " (" + std::to_string(k.ranks) +
               " tokens)";
    throw InputError(name + ": a tiktoken BPE file of an unknown vocabulary (" +
                     std::to_string(spec.tokens.size()) + " tokens, sha256 " + sha +
                     "): such a file does not say its pre-tokenizer pattern or special tokens, "
                     "and wireup-prep knows those of " +
                     names + "; pass the model's tokenizer.json instead");
  }
  spec.pattern = known->pattern;
  spec.specials = known->specials;
  spec.bos = known->bos;
  spec.eos = known->eos;
  return spec;
}

}  // namespace

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::load(const std::filesystem::path& path) {
  const std::string name = "tokenizer " + wireup::quoted(path.string());
  std::string bytes;
  try {
    bytes = io::read_text(path, kMaxTokenizerBytes);
  } catch (const InputError& e) {
    // read_text's message is "PATH: WHAT"; the path is already in `name`.
    std::string_view what = e.what();
    if (what.starts_with(path.string() + ": ")) what.remove_prefix(path.string().size() + 2);
    throw InputError(name + ": cannot read (" + std::string(what) + "; " + kExpected + ")");
  }
  return from_bytes(std::move(bytes), name);
}

Tokenizer Tokenizer::from_bytes(std::string model_bytes, const std::string& name) {
  Tokenizer t;
  if (looks_like_json(model_bytes)) {
    t.impl_->kind = Kind::HuggingFace;
    t.impl_->bpe.emplace(parse_hf_tokenizer_json(model_bytes, name), name);
  } else if (looks_like_tiktoken(model_bytes)) {
    t.impl_->kind = Kind::Tiktoken;
    t.impl_->bpe.emplace(tiktoken_spec(model_bytes, name), name);
  } else {
    const auto status = t.impl_->sp.LoadFromSerializedProto(model_bytes);
    if (!status.ok())
      throw InputError(name + ": not a tokenizer wireup-prep reads (as a SentencePiece model: " +
                       status.ToString() + "); " + kExpected);
    if (t.impl_->sp.GetPieceSize() <= 0) throw InputError(name + ": empty vocabulary");
  }
  t.impl_->bytes = std::move(model_bytes);
  return t;
}

void Tokenizer::encode(std::string_view text, std::vector<int>& ids) const {
  ids.clear();
  if (impl_->bpe) return impl_->bpe->encode(text, ids);
  const auto status = impl_->sp.Encode(text, &ids);
  if (!status.ok()) throw std::runtime_error("SentencePiece encode failed: " + status.ToString());
}

// Every piece after the first is encoded behind a lead whose ids are then
// dropped, so the model's dummy prefix (a space SentencePiece puts before
// the text it is given) lands on the lead, not inside the document. After a
// cut before a run of spaces the lead is a word ("a"): the piece's leading
// space stays the start of a word, as inside the whole text, whatever the
// model's add_dummy_prefix and remove_extra_whitespaces say. After a cut
// elsewhere it is a newline, which no piece of a whitespace-splitting
// vocabulary joins to the next character. Should the lead's ids not be a
// prefix of the result, the piece is encoded alone.
std::size_t Tokenizer::encode_pieces(std::string_view text, std::size_t max_piece,
                                     const std::function<void(const std::vector<int>&)>& sink,
                                     const std::function<void()>& between) const {
  if (impl_->bpe) {
    impl_->bpe->encode_batches(text, max_piece, sink, between);
    return 0;
  }
  static constexpr std::string_view kWordLead = "a", kCutLead = "\n";
  std::vector<int> ids, word_lead, cut_lead;
  std::string led;
  std::size_t begin = 0, rough = 0;
  bool after_word = true;  // the previous cut was before a run of spaces
  for (;;) {
    between();
    bool at_word = true;
    const std::size_t end = piece_end(text, begin, max_piece, at_word);
    const std::string_view piece = text.substr(begin, end - begin);
    if (begin == 0) {
      encode(piece, ids);
    } else {
      const std::string_view lead_text = after_word ? kWordLead : kCutLead;
      std::vector<int>& lead = after_word ? word_lead : cut_lead;
      if (lead.empty()) encode(lead_text, lead);
      led.assign(lead_text);
      led.append(piece);
      encode(led, ids);
      if (ids.size() >= lead.size() && std::equal(lead.begin(), lead.end(), ids.begin()))
        ids.erase(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(lead.size()));
      else
        encode(piece, ids);
    }
    sink(ids);
    if (end == text.size()) break;
    if (!at_word) ++rough;
    after_word = at_word;
    begin = end;
  }
  return rough;
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  if (impl_->bpe) return impl_->bpe->decode(ids);
  std::string out;
  const auto status = impl_->sp.Decode(ids, &out);
  if (!status.ok()) throw std::runtime_error("SentencePiece decode failed: " + status.ToString());
  return out;
}

Tokenizer::Kind Tokenizer::kind() const { return impl_->kind; }
const char* Tokenizer::type_name() const {
  switch (impl_->kind) {
    case Kind::Tiktoken:
      return "tiktoken";
    case Kind::HuggingFace:
      return "huggingface";
    case Kind::SentencePiece:
      break;
  }
  return "sentencepiece";
}
const char* Tokenizer::file_name() const {
  return impl_->kind == Kind::HuggingFace ? "tokenizer.json" : "tokenizer.model";
}
std::uint32_t Tokenizer::vocab_size() const {
  if (impl_->bpe) return impl_->bpe->vocab_size();
  return static_cast<std::uint32_t>(impl_->sp.GetPieceSize());
}
int Tokenizer::bos_id() const { return impl_->bpe ? impl_->bpe->bos_id() : impl_->sp.bos_id(); }
int Tokenizer::eos_id() const { return impl_->bpe ? impl_->bpe->eos_id() : impl_->sp.eos_id(); }
const std::string& Tokenizer::model_bytes() const { return impl_->bytes; }
int Tokenizer::special_id(std::string_view text) const {
  return impl_->bpe ? impl_->bpe->special_id(text) : -1;
}
std::size_t Tokenizer::token_length(int id) const {
  if (impl_->bpe) return impl_->bpe->token_length(id);
  return decode({id}).size();
}

namespace {

// SentencePiece's status type: sentencepiece::util::Status up to 0.2.0 (bookworm,
// trixie), absl::Status from 0.2.1 (sid). Both default-construct to OK.
using SpStatus = decltype(std::declval<const sentencepiece::SentenceIterator&>().status());

class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(const std::vector<std::string>& v) : v_(v) {}
  bool done() const override { return i_ >= v_.size(); }
  void Next() override { ++i_; }
  const std::string& value() const override { return v_[i_]; }
  SpStatus status() const override { return {}; }

 private:
  const std::vector<std::string>& v_;
  std::size_t i_ = 0;
};

}  // namespace

std::string train_sentencepiece(const std::vector<std::string>& sentences,
                                const TrainOptions& options) {
  constexpr unsigned kTrainThreads = 8;
  if (options.model_type != "bpe" && options.model_type != "unigram")
    throw InputError("--model-type " + wireup::quoted(options.model_type) +
                     ": expected bpe or unigram");
  if (sentences.empty()) throw InputError("no text to train a tokenizer on (empty corpus)");
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(options.vocab_size)},
      // Recorded in the model file: a fixed count keeps the bytes the same on
      // every machine (SentencePiece's training result does not depend on it).
      {"num_threads", std::to_string(kTrainThreads)},
      {"character_coverage", "1.0"},
      {"byte_fallback", "true"},
      {"split_digits", "true"},
      {"allow_whitespace_only_pieces", "true"},
      {"normalization_rule_name", "identity"},
      {"remove_extra_whitespaces", "false"},
      {"add_dummy_prefix", "true"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      // wireup-prep samples the sentences itself (deterministically).
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"max_sentence_length", "16384"},
      {"minloglevel", "2"},
  };
  VectorIterator it(sentences);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &it, &model);
  if (!status.ok())
    throw InputError("--vocab-size " + std::to_string(options.vocab_size) +
                     ": SentencePiece training failed: " + status.ToString() +
                     " (byte fallback needs a vocabulary of at least ~300; a small corpus "
                     "supports only a small one)");
  return model;
}

}  // namespace wireup::tokenizer
