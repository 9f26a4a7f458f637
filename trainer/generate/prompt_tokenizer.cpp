#include "generate/prompt_tokenizer.hpp"

#include <cstdio>

#include "wireup/error.hpp"

namespace wireup::train::generate {

#if WIREUP_HAVE_TOKENIZER

const char* const kTokenizerMissing = "";

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

#else

const char* const kTokenizerMissing =
    "this wireup-train was built without the tokenizer library (wireup_tokenizer: "
    "libsentencepiece-dev, libpcre2-dev, libicu-dev)";

// No tokenizer here: every file is served by a wireup-prep built with one.
PromptTokenizer::PromptTokenizer(const std::string& path, const std::string& flag) {
  const std::string prep = find_wireup_prep();
  std::fprintf(stderr, "[generate] %s: %s %s is served by %s serve-tokenizer\n", kTokenizerMissing,
               flag.c_str(), path.c_str(), prep.c_str());
  try {
    served_ = std::make_unique<ServedTokenizer>(prep, path, flag + " " + path);
  } catch (const InputError& e) {
    throw InputError(std::string(e.what()) + "; " + kTokenizerMissing +
                     ", so generate reads --tokenizer only through wireup-prep serve-tokenizer: "
                     "set WIREUP_PREP to a wireup-prep built with the tokenizer, or install "
                     "those packages and rebuild");
  }
}

#endif

PromptTokenizer PromptTokenizer::served(const std::string& prep, const std::string& path,
                                        const std::string& flag) {
  PromptTokenizer t;
  t.served_ = std::make_unique<ServedTokenizer>(prep, path, flag + " " + path);
  return t;
}

#if WIREUP_HAVE_TOKENIZER

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

#else

std::vector<int> PromptTokenizer::encode(const std::string& text) const {
  return served_->encode(text);
}
std::string PromptTokenizer::decode(const std::vector<int>& ids) const {
  return served_->decode(ids);
}
std::uint32_t PromptTokenizer::vocab_size() const { return served_->vocab_size(); }
int PromptTokenizer::bos_id() const { return served_->bos_id(); }
int PromptTokenizer::eos_id() const { return served_->eos_id(); }
int PromptTokenizer::special_id(std::string_view text) const { return served_->special_id(text); }

#endif

}  // namespace wireup::train::generate
