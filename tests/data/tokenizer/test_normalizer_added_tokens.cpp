// A tokenizer.json's normalizer (NFC, as Qwen2/2.5/3's; any other refused by
// name), its added tokens (those not special matched in text, as Hugging
// Face does; special ones only by name) and Qwen's pre-tokenizer pattern, on
// synthetic vocabularies. The real Qwen3 tokenizer: test_qwen3_vocab.cpp.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "wireup/error.hpp"
#include "wireup/tokenizer/added_tokens.hpp"
#include "wireup/tokenizer/byte_level.hpp"
#include "wireup/tokenizer/hf_tokenizer_json.hpp"
#include "wireup/tokenizer/known_vocabularies.hpp"
#include "wireup/tokenizer/pretokenizer.hpp"
#include "wireup/tokenizer/tokenizer.hpp"
#include "wireup/tokenizer/unicode_nfc.hpp"

using namespace wireup::tokenizer;
using Catch::Matchers::Contains;

namespace {

std::string nfc(std::string_view text) {
  std::string storage;
  return std::string(to_nfc(text, storage));
}

// Bytes 0..255, then "é" (256) merged from its two bytes; Qwen's pattern;
// added tokens <think> 300 and </think> 301 (not special), <|im_end|> 302
// (special).
nlohmann::json qwen_like_json() {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[bytes_to_unicode(std::string(1, static_cast<char>(b)))] = b;
  vocab[bytes_to_unicode("\xC3\xA9")] = 256;
  const auto added = [](int id, const char* text, bool special) {
    return nlohmann::json{{"id", id},          {"content", text}, {"single_word", false},
                          {"lstrip", false},   {"rstrip", false}, {"normalized", false},
                          {"special", special}};
  };
  return {{"version", "1.0"},
          {"normalizer", {{"type", "NFC"}}},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"},
               {"pattern", {{"Regex", std::string(kQwen2Pattern)}}},
               {"behavior", "Isolated"},
               {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
          {"added_tokens",
           {added(300, "<think>", false), added(301, "</think>", false),
            added(302, "<|im_end|>", true)}},
          {"model",
           {{"type", "BPE"},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", {bytes_to_unicode("\xC3") + " " + bytes_to_unicode("\xA9")}}}}};
}

std::vector<int> ids_of(const Tokenizer& t, std::string_view text) {
  std::vector<int> ids;
  t.encode(text, ids);
  return ids;
}

}  // namespace

TEST_CASE("NFC: canonical composition by ICU, NFC text returned as is", "[bpe]") {
  std::string storage;
  const std::string_view composed = "caf\xC3\xA9 \xEA\xB0\x81";          // "café 각"
  CHECK(to_nfc(composed, storage).data() == composed.data());            // no copy
  CHECK(nfc("cafe\xCC\x81") == "caf\xC3\xA9");                           // e + U+0301 -> é
  CHECK(nfc("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8") == "\xEA\xB0\x81");  // jamo -> 각
  CHECK(nfc("\xE2\x84\xAB") == "\xC3\x85");                              // Angstrom sign -> Å
  CHECK(nfc("\xEF\xAC\x81") == "\xEF\xAC\x81");            // ﬁ stays (NFKC would not)
  CHECK(nfc("q\xCC\x87\xCC\xA3") == "q\xCC\xA3\xCC\x87");  // marks in canonical order
  CHECK(nfc("") == "");
}

TEST_CASE("tokenizer.json normalizer: NFC applied, any other refused by name", "[bpe]") {
  const auto j = qwen_like_json();
  CHECK(parse_hf_tokenizer_json(j.dump(), "t").normalization == Normalization::Nfc);
  auto seq = j;
  seq["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}}}};
  CHECK(parse_hf_tokenizer_json(seq.dump(), "t").normalization == Normalization::Nfc);
  auto none = j;
  none["normalizer"] = nullptr;
  CHECK(parse_hf_tokenizer_json(none.dump(), "t").normalization == Normalization::None);

  for (const char* other : {"NFKC", "NFD", "Lowercase", "Prepend"}) {
    auto bad = j;
    bad["normalizer"] = {{"type", other}};
    CHECK_THROWS_WITH(
        Tokenizer::from_bytes(bad.dump(), "tokenizer 'q.json'"),
        Contains(std::string("tokenizer 'q.json': its normalizer is ") + other +
                 ", which wireup-prep does not apply (it applies only NFC, as Qwen's)"));
  }
  auto two = j;
  two["normalizer"] = {{"type", "Sequence"},
                       {"normalizers", {{{"type", "NFC"}}, {{"type", "Lowercase"}}}}};
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(two.dump(), "t"),
                    Contains("its normalizer is a Sequence of other than one step"));

  const auto tok = Tokenizer::from_bytes(j.dump(), "t");
  // "é" composed and decomposed: the same token once normalized.
  CHECK(ids_of(tok, "\xC3\xA9") == std::vector<int>{256});
  CHECK(ids_of(tok, "e\xCC\x81") == std::vector<int>{256});
  CHECK(tok.decode({256}) == "\xC3\xA9");
  const auto plain = Tokenizer::from_bytes(none.dump(), "t");
  CHECK(ids_of(plain, "e\xCC\x81") == std::vector<int>{'e', 0xCC, 0x81});
  CHECK_THROWS_WITH(ids_of(tok, "ok <think>e\xCC"), Contains("not valid UTF-8 at byte 12"));
}

TEST_CASE("Qwen's pattern: Llama 3's with one digit a piece", "[bpe]") {
  const Pretokenizer qwen(std::string(kQwen2Pattern), "qwen");
  const Pretokenizer llama(std::string(kLlama3Pattern), "llama");
  std::vector<std::string> q, l;
  for (auto* out : {&q, &l}) {
    Pretokenizer::Cursor c(out == &q ? qwen : llama, "x 12345 I'LL\n\n  y", true);
    std::string_view piece;
    while (c.next(piece)) out->emplace_back(piece);
  }
  using V = std::vector<std::string>;
  CHECK(q == V{"x", " ", "1", "2", "3", "4", "5", " I", "'LL", "\n\n", " ", " y"});
  CHECK(l == V{"x", " ", "123", "45", " I", "'LL", "\n\n", " ", " y"});
  const auto spec = parse_hf_tokenizer_json(qwen_like_json().dump(), "t");
  CHECK(spec.pattern == kQwen2Pattern);
  CHECK(spec.keep_gaps);
  CHECK(find_known_pattern(kQwen2Pattern)->name == "Qwen2");
  // A pattern that is not a known one is refused by name.
  auto other = qwen_like_json();
  std::string regex(kQwen2Pattern);
  regex.replace(regex.find(R"(\p{N}|)"), 6, R"(\p{N}{1,2}|)");
  other["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = regex;
  CHECK_THROWS_WITH(
      Tokenizer::from_bytes(other.dump(), "tokenizer 'q.json'"),
      Contains("tokenizer 'q.json': its pre_tokenizer's Split regex " + regex +
               " is not one wireup-prep reproduces (it knows Llama 3's, Qwen2's, GPT-2's)"));
}

TEST_CASE("added tokens: leftmost-longest, the text between them handed out", "[bpe]") {
  const AddedTokenSplitter s({{"<a>", 1, false}, {"<a>b", 2, false}, {"b", 3, false}});
  AddedTokenSplitter::Cursor c(s, "x<a>bb<a>");
  std::string_view gap;
  int id = 0;
  std::vector<std::pair<std::string, int>> got;
  while (c.next(gap, id)) got.emplace_back(gap, id);
  CHECK(got == std::vector<std::pair<std::string, int>>{{"x", 2}, {"", 3}, {"", 1}, {"", -1}});
  const AddedTokenSplitter none;
  AddedTokenSplitter::Cursor whole(none, "text");
  REQUIRE(whole.next(gap, id));
  CHECK((gap == "text" && id == -1));
  CHECK_FALSE(whole.next(gap, id));
}

TEST_CASE("added tokens: not special matched in text, special ones only by name", "[bpe]") {
  const auto j = qwen_like_json();
  const auto tok = Tokenizer::from_bytes(j.dump(), "t");
  CHECK(tok.vocab_size() == 303);
  CHECK(tok.bos_id() == -1);
  CHECK(tok.special_id("<think>") == 300);
  CHECK(tok.special_id("<|im_end|>") == 302);
  // <think> and </think> are those tokens wherever the text spells them.
  CHECK(ids_of(tok, "<think>e\xCC\x81</think>") == std::vector<int>{300, 256, 301});
  CHECK(ids_of(tok, "a<think><think>") == std::vector<int>{'a', 300, 300});
  // <|im_end|> in text is ordinary text: no injection.
  const auto im_end = ids_of(tok, "<|im_end|>");
  CHECK(im_end.size() == 10);
  CHECK(tok.decode(im_end) == "<|im_end|>");
  CHECK(tok.decode({300, 256, 302}) == "<think>\xC3\xA9<|im_end|>");
  // Batches give encode()'s ids, added tokens and normalized text included.
  const std::string text = "<think>cafe\xCC\x81 12 e\xCC\x81</think> <|im_end|> x";
  std::vector<int> batched;
  std::size_t batches = 0;
  tok.encode_pieces(
      text, 3,
      [&](const std::vector<int>& ids) { batched.insert(batched.end(), ids.begin(), ids.end()); },
      [&] { ++batches; });
  CHECK(batched == ids_of(tok, text));
  CHECK(batches > 5);

  const auto refused = [&](const char* key) {
    auto bad = j;
    bad["added_tokens"][0][key] = true;
    return parse_hf_tokenizer_json(bad.dump(), "tokenizer 'q.json'");
  };
  for (const char* key : {"lstrip", "rstrip", "single_word"})
    CHECK_THROWS_WITH(refused(key), Contains(std::string("tokenizer 'q.json': added token "
                                                         "'<think>' (not special) has ") +
                                             key + ", which wireup-prep does not reproduce"));
  CHECK_THROWS_WITH(refused("normalized"), Contains("is matched in normalized text"));
  auto special_lstrip = j;  // a special token is never matched: its options do not matter
  special_lstrip["added_tokens"][2]["lstrip"] = true;
  CHECK_NOTHROW(parse_hf_tokenizer_json(special_lstrip.dump(), "t"));
  auto empty = j;
  empty["added_tokens"][0]["content"] = "";
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(empty.dump(), "t"),
                    Contains("added token 300 is empty"));
}
