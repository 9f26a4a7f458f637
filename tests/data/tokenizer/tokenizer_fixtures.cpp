#include "tokenizer_fixtures.hpp"

#include <catch2/catch.hpp>
#include <ctime>

namespace wireup::test {
namespace fs = std::filesystem;

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

fs::path vocab_file(const std::string& name) {
  const fs::path p = fs::path(WIREUP_VOCAB_DIR) / name;
  if (!fs::exists(p))
    FAIL(p.string() << " is missing: run tests/data/vocab/fetch-vocab.sh (test.sh does) to "
                       "fetch the real vocabularies");
  return p;
}

const tokenizer::Tokenizer& llama3() {
  static const auto t = tokenizer::Tokenizer::load(vocab_file("llama3.tiktoken"));
  return t;
}

const tokenizer::Tokenizer& qwen3() {
  static const auto t = tokenizer::Tokenizer::load(vocab_file("qwen3/tokenizer.json"));
  return t;
}

std::vector<int> ids_of(const tokenizer::Tokenizer& t, std::string_view text) {
  std::vector<int> ids;
  t.encode(text, ids);
  return ids;
}

const std::vector<std::string> kTexts = {
    "Hello world",
    "I'M here, it'S the 'LL case",
    "1234567 digits 00",
    "tabs\tand\r\nCRLF\n\n\n  spaces   end  ",
    "日本語のテキスト 한국어 텍스트 العربية हिन्दी "
    "👨‍👩‍👧‍👦 "
    "🏳️‍🌈",
    "<|begin_of_text|> special",
    "     x",
    "a\u00a0b ſ K 's",
};

}  // namespace wireup::test
