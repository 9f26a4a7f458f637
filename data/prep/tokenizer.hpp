#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wireup::prep {

// A SentencePiece model (Llama 2's tokenizer.model format). The sentencepiece
// headers stay in tokenizer.cpp. encode/decode are const and thread-safe.
class Tokenizer {
 public:
  // InputError naming `path` when it is missing or not a SentencePiece model.
  static Tokenizer load(const std::filesystem::path& path);
  static Tokenizer from_bytes(std::string model_bytes, const std::string& name);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  void encode(std::string_view text, std::vector<int>& ids) const;
  // encode(text) with memory bounded by `max_piece` bytes of text whatever
  // text's length: the text goes to SentencePiece in pieces (see
  // piece_end), each piece's ids to `sink` in order. `between` runs before
  // each piece (it may throw to stop). BPE models give the ids of encode();
  // unigram models the same text, segmented alike but where two
  // segmentations score exactly the same. Returns how many cuts fell outside
  // a word boundary (no space nearby), where ids may differ from encode().
  std::size_t encode_pieces(std::string_view text, std::size_t max_piece,
                            const std::function<void(const std::vector<int>&)>& sink,
                            const std::function<void()>& between) const;
  std::string decode(const std::vector<int>& ids) const;

  std::uint32_t vocab_size() const;
  int bos_id() const;  // -1: the model has none
  int eos_id() const;
  const std::string& model_bytes() const;  // exactly the file's bytes

 private:
  Tokenizer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct TrainOptions {
  std::uint32_t vocab_size = 0;
  std::string model_type = "bpe";  // bpe (as Llama 2) or unigram
};

// Trains a model on `sentences` (one line of text each) with Llama-2-like
// settings: byte fallback, digits split, ids unk=0 bos=1 eos=2, and identity
// normalisation so decode(encode(text)) == text. Returns the model file bytes.
std::string train_sentencepiece(const std::vector<std::string>& sentences,
                                const TrainOptions& options);

}  // namespace wireup::prep
