// wireup-prep's tokenizer on the real Llama 3, cl100k_base and Qwen3
// vocabularies (tests/data/vocab/fetch-vocab.sh puts them in
// WIREUP_VOCAB_DIR): ids known from tiktoken and from Qwen3's own tokenizer
// (tiktoken_parity.py and qwen3_parity.py compare many more where
// python3-tiktoken and nodejs are installed), exact round trips and long
// runs. wireup-prep end to end with them: tests/data/prep/test_prep_llama3.cpp
// and qwen3_parity.py.
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

TEST_CASE("Qwen3's tokenizer.json: NFC, one digit a piece, added tokens; ids as Qwen3's",
          "[vocab]") {
  const auto& t = qwen3();
  CHECK(t.kind() == tokenizer::Tokenizer::Kind::HuggingFace);
  CHECK(t.vocab_size() == 151669);
  CHECK(t.bos_id() == -1);  // Qwen adds no BOS
  CHECK(t.eos_id() == 151643);
  CHECK(t.special_id("<|im_start|>") == 151644);
  CHECK(t.special_id("<|im_end|>") == 151645);
  CHECK(t.special_id("<tool_call>") == 151657);
  CHECK(t.special_id("</think>") == 151668);
  // Ids from the JavaScript tokenizer Qwen3's npm package runs (qwen3_reference.js).
  CHECK(ids_of(t, "Hello world") == std::vector<int>{9707, 1879});
  CHECK(ids_of(t, "cafe\u0301 caf\u00e9") == std::vector<int>{924, 58858, 51950});
  CHECK(ids_of(t, "\u1100\u1161\u11a8 \uac01") == std::vector<int>{126317, 126804});
  CHECK(ids_of(t, "1234567 digits") == std::vector<int>{16, 17, 18, 19, 20, 21, 22, 18509});
  CHECK(ids_of(t, kTexts[3]) ==
        std::vector<int>{30993, 52477, 319, 34, 80658, 1406, 220, 12621, 256, 835, 256});
  // <think> and <tool_call> are tokens in any text; <|im_start|> spelled in text is text.
  CHECK(ids_of(t, "<|im_start|>user\n<think>\nhm\n</think>\n<tool_call>x</tool_call><|im_end|>") ==
        std::vector<int>{27,     91,  318,    4906, 91,     29, 872, 198, 151667, 198, 34301, 198,
                         151668, 198, 151657, 87,   151658, 27, 91,  318, 6213,   91,  29});
  for (const auto& text : kTexts) CHECK(t.decode(ids_of(t, text)) == text);
  CHECK(t.decode({151644, 872, 151645}) == "<|im_start|>user<|im_end|>");
  CHECK_THROWS_AS(t.decode({151669}), std::out_of_range);
  CHECK_THROWS_WITH(ids_of(t, "<think>caf\xC3"), Contains("not valid UTF-8 at byte 11"));
}
