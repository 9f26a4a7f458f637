#include "generate/prompt_tokenizer.hpp"

#include "wireup/error.hpp"

namespace wireup::train::generate {

PromptTokenizer::PromptTokenizer(const std::string& path, const std::string& flag) {
  try {
    local_.emplace(tokenizer::Tokenizer::load(path));
  } catch (const std::exception& e) {
    // Debian's libsentencepiece bundles protobuf-lite 3.14, which refuses to
    // run against the libprotobuf LibTorch loads (main/CMakeLists.txt).
    if (std::string(e.what()).find("Protocol Buffer runtime") == std::string::npos)
      throw InputError(flag + ": " + e.what());
    served_ = std::make_unique<ServedTokenizer>(find_wireup_prep(), path, flag + " " + path);
  }
}

PromptTokenizer PromptTokenizer::served(const std::string& prep, const std::string& path,
                                        const std::string& flag) {
  PromptTokenizer t;
  t.served_ = std::make_unique<ServedTokenizer>(prep, path, flag + " " + path);
  return t;
}

std::vector<int> PromptTokenizer::encode(const std::string& text) const {
  if (served_) return served_->encode(text);
  std::vector<int> ids;
  local_->encode(text, ids);
  return ids;
}

std::string PromptTokenizer::decode(const std::vector<int>& ids) const {
  return served_ ? served_->decode(ids) : local_->decode(ids);
}

std::uint32_t PromptTokenizer::vocab_size() const {
  return served_ ? served_->vocab_size() : local_->vocab_size();
}
int PromptTokenizer::bos_id() const { return served_ ? served_->bos_id() : local_->bos_id(); }
int PromptTokenizer::eos_id() const { return served_ ? served_->eos_id() : local_->eos_id(); }
int PromptTokenizer::special_id(std::string_view text) const {
  return served_ ? served_->special_id(text) : local_->special_id(text);
}

}  // namespace wireup::train::generate
