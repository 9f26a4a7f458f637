#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "generate/served_tokenizer.hpp"
#if WIREUP_HAVE_TOKENIZER
#include "wireup/tokenizer/tokenizer.hpp"
#else
namespace wireup::tokenizer {
class Tokenizer;
}
#endif

// generate's tokenizer: loaded in this process, or, for a SentencePiece model
// (whose protobuf runtime clashes with LibTorch's here), served by a child
// wireup-prep (served_tokenizer.hpp). The same ids and text either way.
// Built without wireup_tokenizer (WIREUP_HAVE_TOKENIZER=0: SentencePiece, PCRE2
// or ICU missing at configure), every file is served, and local() is nullptr.
namespace wireup::train::generate {

// What this build's wireup-train lacks, for messages: empty when it has the
// tokenizer library.
extern const char* const kTokenizerMissing;

class PromptTokenizer {
 public:
  // `flag` names the file in errors ("--tokenizer"); InputError for a file
  // neither can read.
  PromptTokenizer(const std::string& path, const std::string& flag);
  // Served by `prep` whatever the file's kind (tests compare both ways).
  static PromptTokenizer served(const std::string& prep, const std::string& path,
                                const std::string& flag);

  std::vector<int> encode(const std::string& text) const;
  std::string decode(const std::vector<int>& ids) const;
  std::uint32_t vocab_size() const;
  int bos_id() const;
  int eos_id() const;
  int special_id(std::string_view text) const;
  // The tokenizer loaded here; nullptr when served (no chat template then:
  // the templates' special tokens are byte-level BPE tokens).
#if WIREUP_HAVE_TOKENIZER
  const tokenizer::Tokenizer* local() const { return local_ ? &*local_ : nullptr; }
#else
  const tokenizer::Tokenizer* local() const { return nullptr; }
#endif

 private:
  PromptTokenizer() = default;
#if WIREUP_HAVE_TOKENIZER
  std::optional<tokenizer::Tokenizer> local_;
#endif
  std::unique_ptr<ServedTokenizer> served_;
};

}  // namespace wireup::train::generate
