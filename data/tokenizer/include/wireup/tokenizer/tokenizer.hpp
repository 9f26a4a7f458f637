#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace wireup::tokenizer {

// A tokenizer of one of three kinds, told from the file's content (not its
// name): a SentencePiece model (Llama 2's tokenizer.model), a tiktoken BPE
// file of a known vocabulary (Meta's Llama 3 tokenizer.model, cl100k_base),
// or a Hugging Face tokenizer.json with a byte-level BPE model (Llama 3's,
// Qwen2/2.5/3's).
// The sentencepiece headers stay in tokenizer.cpp. encode/decode are const
// and thread-safe.
class Tokenizer {
 public:
  enum class Kind { SentencePiece, Tiktoken, HuggingFace };

  // The largest tokenizer file load() reads (the largest in use, Gemma's
  // tokenizer.json, is 34 MB; Llama 3's is 9 MB).
  static constexpr std::uint64_t kMaxTokenizerBytes = std::uint64_t{64} << 20;

  // InputError naming `path` when it is missing, not a regular file (a FIFO
  // is refused, never waited on), over kMaxTokenizerBytes or none of the kinds.
  static Tokenizer load(const std::filesystem::path& path);
  static Tokenizer from_bytes(std::string model_bytes, const std::string& name);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  void encode(std::string_view text, std::vector<int>& ids) const;
  // encode(text) with memory bounded by `max_piece` bytes of text whatever
  // text's length, each piece's ids to `sink` in order; `between` runs before
  // each piece (it may throw to stop). SentencePiece: the text goes to it in
  // pieces (see piece_end); BPE models give the ids of encode(), unigram
  // models the same text, segmented alike but where two segmentations score
  // exactly the same; returns how many cuts fell outside a word boundary (no
  // space nearby), where ids may differ from encode(). Byte-level BPE
  // (tiktoken, tokenizer.json): the pieces are the pre-tokenizer's, the ids
  // always those of encode(), and it returns 0; one pre-token (a run of
  // letters or of spaces) is merged whole, about 20 bytes of memory a byte.
  std::size_t encode_pieces(std::string_view text, std::size_t max_piece,
                            const std::function<void(const std::vector<int>&)>& sink,
                            const std::function<void()>& between) const;
  // The exact bytes of the ids (a special token of a BPE model gives its
  // spelling); std::runtime_error or std::out_of_range for an unknown id.
  std::string decode(const std::vector<int>& ids) const;

  Kind kind() const;
  // For the manifest: "sentencepiece", "tiktoken" or "huggingface", and the
  // file name the model is copied to ("tokenizer.model", "tokenizer.json").
  const char* type_name() const;
  const char* file_name() const;
  std::uint32_t vocab_size() const;
  int bos_id() const;  // -1: the model has none
  int eos_id() const;
  // Byte-level BPE: the id of the special or added token spelled `text`
  // (Llama 3's "<|eot_id|>": 128009, Qwen's "<|im_start|>": 151644, "<think>":
  // 151667); -1 when there is none, and always for SentencePiece.
  int special_id(std::string_view text) const;
  // The length in bytes of decode({id}) (what an id covers of the text it
  // was encoded from).
  std::size_t token_length(int id) const;
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

}  // namespace wireup::tokenizer
