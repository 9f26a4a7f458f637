#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "generate/served_tokenizer.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

// generate's tokenizer: loaded in this process, or, for a SentencePiece model
// (whose protobuf runtime clashes with LibTorch's here), served by a child
// wireup-prep (served_tokenizer.hpp). The same ids and text either way.
namespace wireup::train::generate {

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
  const tokenizer::Tokenizer* local() const { return local_ ? &*local_ : nullptr; }

 private:
  PromptTokenizer() = default;
  std::optional<tokenizer::Tokenizer> local_;
  std::unique_ptr<ServedTokenizer> served_;
};

}  // namespace wireup::train::generate
