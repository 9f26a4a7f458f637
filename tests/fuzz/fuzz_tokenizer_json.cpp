// libFuzzer target: a Hugging Face tokenizer.json, parsed and built into the
// byte-level BPE tokenizer wireup-prep would use (every table sized), then
// used on a short text. Only returns or throws InputError.
#include "fuzz_common.hpp"
#include "wireup/tokenizer/bpe_tokenizer.hpp"
#include "wireup/tokenizer/hf_tokenizer_json.hpp"

using namespace wireup;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string in = fuzz::as_string(data, size);
  tokenizer::looks_like_json(in);
  fuzz::expect_clean([&] {
    const tokenizer::BpeTokenizer tok(tokenizer::parse_hf_tokenizer_json(in, "tokenizer.json"),
                                      "tokenizer.json");
    std::vector<int> ids;
    tok.encode("Hi there, 42!", ids);
    tok.decode(ids);
  });
  return 0;
}
