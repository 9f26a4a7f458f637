// libFuzzer target: a tiktoken BPE file, parsed and built into a byte-level
// BPE tokenizer with GPT-2's pattern, then used on a short text. Only
// returns or throws InputError.
#include "fuzz_common.hpp"
#include "wireup/tokenizer/bpe_tokenizer.hpp"
#include "wireup/tokenizer/known_vocabularies.hpp"
#include "wireup/tokenizer/tiktoken_file.hpp"

using namespace wireup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  tokenizer::looks_like_tiktoken(in);
  fuzz::expect_clean([&] {
    tokenizer::BpeSpec spec;
    spec.tokens = tokenizer::parse_tiktoken(in, "tokenizer.model");
    spec.pattern = std::string(tokenizer::kGpt2Pattern);
    const tokenizer::BpeTokenizer tok(spec, "tokenizer.model");
    std::vector<int> ids;
    tok.encode("Hi there, 42!", ids);
    tok.decode(ids);
  });
  return 0;
}
