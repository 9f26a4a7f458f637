#include "wireup/tokenizer/known_vocabularies.hpp"

namespace wireup::tokenizer {
namespace {

// Meta's Llama 3 special tokens (128000 .. 128255), as the first release's
// tokenizer.py names them; later releases renamed some reserved ones, which
// changes only what decode() spells for them.
std::vector<SpecialToken> llama3_specials() {
  constexpr int kBase = 128000;
  std::vector<std::string> names = {"<|begin_of_text|>",
                                    "<|end_of_text|>",
                                    "<|reserved_special_token_0|>",
                                    "<|reserved_special_token_1|>",
                                    "<|reserved_special_token_2|>",
                                    "<|reserved_special_token_3|>",
                                    "<|start_header_id|>",
                                    "<|end_header_id|>",
                                    "<|reserved_special_token_4|>",
                                    "<|eot_id|>"};
  for (int i = 5; i < 256 - 5; ++i)
    names.push_back("<|reserved_special_token_" + std::to_string(i) + "|>");
  std::vector<SpecialToken> out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out.push_back({names[i], kBase + static_cast<int>(i)});
  return out;
}

}  // namespace

const std::vector<KnownVocabulary>& known_vocabularies() {
  static const std::vector<KnownVocabulary> v = {
      {"Llama 3", "82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55", 128000,
       kLlama3Pattern, llama3_specials(), 128000, 128001},
      {"cl100k_base",
       "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
       100256,
       kLlama3Pattern,
       {{"<|endoftext|>", 100257},
        {"<|fim_prefix|>", 100258},
        {"<|fim_middle|>", 100259},
        {"<|fim_suffix|>", 100260},
        {"<|endofprompt|>", 100276}},
       -1,
       100257},
  };
  return v;
}

const std::vector<KnownPattern>& known_patterns() {
  static const std::vector<KnownPattern> v = {
      {"Llama 3", kLlama3Pattern}, {"Qwen2", kQwen2Pattern}, {"GPT-2", kGpt2Pattern}};
  return v;
}

const KnownPattern* find_known_pattern(std::string_view regex) {
  for (const auto& k : known_patterns())
    if (k.pattern == regex) return &k;
  return nullptr;
}

const KnownVocabulary* find_known_vocabulary(std::string_view sha256_hex) {
  for (const auto& k : known_vocabularies())
    if (k.sha256 == sha256_hex) return &k;
  return nullptr;
}

}  // namespace wireup::tokenizer
