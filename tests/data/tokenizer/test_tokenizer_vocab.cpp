// wireup-prep's tokenizer on the real Llama 3 and cl100k_base vocabularies
// (tests/data/vocab/fetch-vocab.sh puts them in WIREUP_VOCAB_DIR): ids known
// from tiktoken (tiktoken_parity.py compares many more in the lane that has
// python3-tiktoken), exact round trips and long runs. wireup-prep end to end
// with them: tests/data/prep/test_prep_llama3.cpp.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tokenizer_fixtures.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

using namespace wireup;
using namespace wireup::test;
using Catch::Matchers::Contains;

TEST_CASE("Llama 3's tokenizer.model: ids as tiktoken's, exact round trips", "[vocab]") {
  const auto& t = llama3();
  CHECK(t.kind() == tokenizer::Tokenizer::Kind::Tiktoken);
  CHECK(std::string(t.type_name()) == "tiktoken");
  CHECK(t.vocab_size() == 128256);
  CHECK(t.bos_id() == 128000);
  CHECK(t.eos_id() == 128001);
  // Ids checked against the real tiktoken (python3-tiktoken 0.9, trixie).
  CHECK(ids_of(t, kTexts[0]) == std::vector<int>{9906, 1917});
  CHECK(ids_of(t, kTexts[1]) ==
        std::vector<int>{40, 28703, 1618, 11, 433, 13575, 279, 364, 4178, 1162});
  CHECK(ids_of(t, kTexts[2]) == std::vector<int>{4513, 10961, 22, 19016, 220, 410});
  CHECK(ids_of(t, kTexts[3]) ==
        std::vector<int>{32093, 53577, 319, 34, 81758, 1432, 220, 12908, 256, 842, 256});
  CHECK(ids_of(t, kTexts[5]) == std::vector<int>{27, 91, 7413, 3659, 4424, 91, 29, 3361});
  CHECK(ids_of(t, kTexts[6]) == std::vector<int>{257, 865});
  for (const auto& text : kTexts) CHECK(t.decode(ids_of(t, text)) == text);
  CHECK(t.decode({128000, 9906, 128001}) == "<|begin_of_text|>Hello<|end_of_text|>");
  CHECK(t.decode({128009}) == "<|eot_id|>");
  CHECK_THROWS_AS(t.decode({128256}), std::out_of_range);
  CHECK_THROWS_WITH(ids_of(t, "caf\xC3"), Contains("not valid UTF-8 at byte 4"));
}

TEST_CASE("Llama 3: megabyte runs of one letter or of spaces stay fast and exact", "[vocab]") {
  const auto& t = llama3();
  for (const std::string& text : {std::string(1 << 20, 'a'), std::string(1 << 20, ' ') + "x",
                                  std::string(1 << 20, '7'), std::string(1 << 19, '\t') + "\r\n"}) {
    const double t0 = thread_cpu_seconds();
    const auto ids = ids_of(t, text);
    CHECK(thread_cpu_seconds() - t0 < 20.0);
    CHECK(t.decode(ids) == text);
    CHECK(ids.size() < text.size() / 2);
  }
}

TEST_CASE("cl100k_base: its pattern and specials, ids as tiktoken's", "[vocab]") {
  const auto t = tokenizer::Tokenizer::load(vocab_file("cl100k_base.tiktoken"));
  CHECK(t.vocab_size() == 100277);
  CHECK(t.bos_id() == -1);
  CHECK(t.eos_id() == 100257);
  CHECK(ids_of(t, "hello world") == std::vector<int>{15339, 1917});
  CHECK(t.decode({100257, 100276}) == "<|endoftext|><|endofprompt|>");
  CHECK_THROWS_AS(t.decode({100261}), std::out_of_range);  // an id cl100k_base leaves unused
  for (const auto& text : kTexts) CHECK(t.decode(ids_of(t, text)) == text);
}
