// The byte-level BPE pieces of wireup-prep's tokenizer, on synthetic
// vocabularies: GPT-2's byte alphabet, tiktoken files, the merge algorithms,
// the PCRE2 pre-tokenizer, tokenizer.json parsing and kind detection.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <random>

#include "tokenizer_fixtures.hpp"
#include "wireup/error.hpp"
#include "wireup/tokenizer/bpe_model.hpp"
#include "wireup/tokenizer/bpe_tokenizer.hpp"
#include "wireup/tokenizer/byte_level.hpp"
#include "wireup/tokenizer/hf_tokenizer_json.hpp"
#include "wireup/tokenizer/known_vocabularies.hpp"
#include "wireup/tokenizer/pretokenizer.hpp"
#include "wireup/tokenizer/tiktoken_file.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

using namespace wireup::tokenizer;
using Catch::Matchers::Contains;
using wireup::test::thread_cpu_seconds;

namespace {

// The 256 bytes, then `extra` tokens (ranks 256, 257, ...).
std::vector<std::string> byte_vocab(const std::vector<std::string>& extra) {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.emplace_back(1, static_cast<char>(b));
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

std::vector<int> encode(const BpeModel& m, std::string_view piece, bool heap) {
  std::vector<int> out;
  if (heap)
    m.encode_heap(piece, out);
  else
    m.encode_scan(piece, out);
  return out;
}

std::string spell(const BpeModel& m, const std::vector<int>& ids) {
  std::string out;
  for (const int id : ids) out += std::string(m.bytes_of(static_cast<std::uint32_t>(id))) + "|";
  return out;
}

std::vector<std::string> pieces(const Pretokenizer& p, std::string_view text, bool gaps = false) {
  std::vector<std::string> out;
  Pretokenizer::Cursor c(p, text, gaps);
  std::string_view piece;
  while (c.next(piece)) out.emplace_back(piece);
  return out;
}

std::string tiktoken_text(const std::vector<std::string>& tokens) {
  static const char* kB64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t r = 0; r < tokens.size(); ++r) {
    const auto& t = tokens[r];
    for (std::size_t i = 0; i < t.size(); i += 3) {
      unsigned n = static_cast<unsigned char>(t[i]) << 16;
      if (i + 1 < t.size()) n |= static_cast<unsigned char>(t[i + 1]) << 8;
      if (i + 2 < t.size()) n |= static_cast<unsigned char>(t[i + 2]);
      out += kB64[n >> 18];
      out += kB64[(n >> 12) & 63];
      out += i + 1 < t.size() ? kB64[(n >> 6) & 63] : '=';
      out += i + 2 < t.size() ? kB64[n & 63] : '=';
    }
    out += " " + std::to_string(r) + "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("GPT-2's byte alphabet maps every byte both ways", "[bpe]") {
  CHECK(bytes_to_unicode(" ") == "\xC4\xA0");   // U+0120 'Ġ'
  CHECK(bytes_to_unicode("\n") == "\xC4\x8A");  // U+010A 'Ċ'
  CHECK(bytes_to_unicode("Ab~") == "Ab~");
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  CHECK(unicode_to_bytes(bytes_to_unicode(all)) == all);
  CHECK_FALSE(unicode_to_bytes(" ").has_value());             // space is not in the alphabet
  CHECK_FALSE(unicode_to_bytes("\xE6\x97\xA5").has_value());  // 日
  CHECK_FALSE(unicode_to_bytes("\xC4").has_value());          // truncated
}

TEST_CASE("tiktoken files: base64 lines, dense ranks, clear errors", "[bpe]") {
  CHECK(base64_decode("aGVsbG8=") == "hello");
  CHECK(base64_decode("IQ==") == "!");
  CHECK_FALSE(base64_decode("IQ=").has_value());
  CHECK_FALSE(base64_decode("I=Q=").has_value());
  CHECK_FALSE(base64_decode("I*==").has_value());
  const auto vocab = byte_vocab({"ab", "abc"});
  const auto text = tiktoken_text(vocab);
  CHECK(looks_like_tiktoken(text));
  CHECK_FALSE(looks_like_tiktoken("\x0a\x05hello"));  // a protobuf's first bytes
  CHECK_FALSE(looks_like_tiktoken("{\"model\": 1}"));
  CHECK(parse_tiktoken(text, "t") == vocab);
  CHECK_THROWS_WITH(parse_tiktoken("IQ== 0\nIg== 2\n", "f.tiktoken"),
                    Contains("f.tiktoken:2: rank 2 where 1 was expected"));
  CHECK_THROWS_WITH(parse_tiktoken("IQ== 0\nIQ== 1\n", "f"), Contains("listed twice"));
  CHECK_THROWS_WITH(parse_tiktoken("IQ== 0\nI*== 1\n", "f"), Contains("f:2: bad base64"));
  CHECK_THROWS_WITH(parse_tiktoken("IQ== 0\n\nIg== 1\n", "f"), Contains("f:2: empty line"));
  CHECK_THROWS_WITH(parse_tiktoken("IQ==0\n", "f"), Contains("expected a tiktoken BPE file"));
}

TEST_CASE("BPE merges the lowest rank first, the leftmost of equals", "[bpe]") {
  const auto m = BpeModel::from_ranks(byte_vocab({"aa", "ab", "xyz"}));
  for (const bool heap : {false, true}) {
    CHECK(spell(m, encode(m, "aaa", heap)) == "aa|a|");  // not a|aa: leftmost
    CHECK(spell(m, encode(m, "aaaa", heap)) == "aa|aa|");
    CHECK(spell(m, encode(m, "aab", heap)) == "aa|b|");   // aa (256) before ab (257)
    CHECK(spell(m, encode(m, "xyz", heap)) == "x|y|z|");  // no pair of xyz merges
  }
  std::vector<int> out;
  m.encode("xyz", out);  // but a piece that is a token is that token
  CHECK(spell(m, out) == "xyz|");
}

TEST_CASE("the scan and the heap give the same ids on random text", "[bpe]") {
  // A vocabulary grown like BPE training: random pairs of existing tokens.
  std::mt19937 rng(7);
  std::vector<std::string> extra;
  auto vocab = byte_vocab({});
  const std::string alphabet = "abcd ";
  std::vector<std::string> pool;
  for (const char c : alphabet) pool.emplace_back(1, c);
  while (extra.size() < 300) {
    auto t = pool[rng() % pool.size()] + pool[rng() % pool.size()];
    if (std::find(pool.begin(), pool.end(), t) != pool.end()) continue;
    pool.push_back(t);
    extra.push_back(t);
  }
  const auto m = BpeModel::from_ranks(byte_vocab(extra), false);
  for (int i = 0; i < 2000; ++i) {
    std::string s(1 + rng() % 120, ' ');
    for (auto& c : s) c = alphabet[rng() % alphabet.size()];
    CAPTURE(s);
    const auto a = encode(m, s, false), b = encode(m, s, true);
    REQUIRE(a == b);
    std::string back;
    for (const int id : a) back += m.bytes_of(static_cast<std::uint32_t>(id));
    REQUIRE(back == s);
  }
}

TEST_CASE("a megabyte piece merges in n log n, not n squared", "[bpe]") {
  const auto m = BpeModel::from_ranks(byte_vocab({"aa", "aaaa", "aaaaaaaa"}));
  const std::string piece(1 << 20, 'a');
  const double t0 = thread_cpu_seconds();
  std::vector<int> out;
  m.encode(piece, out);
  CHECK(out.size() == (1u << 20) / 8);
  CHECK(thread_cpu_seconds() - t0 < 20.0);  // about 0.3 s; the scan would take hours
}

TEST_CASE("Hugging Face merges: only listed pairs merge, in list order", "[bpe]") {
  // abc is a token, but only the pair (a, bc) is listed: a|b|c stays, since
  // (a, b) and (b, c) are no merges; tiktoken's rule would join ab first.
  const auto vocab = byte_vocab({"bc", "abc", "ab"});
  const auto hf = BpeModel::from_merges(vocab, {{"b", "c"}, {"a", "bc"}}, false);
  const auto tk = BpeModel::from_ranks(vocab, false);
  for (const bool heap : {false, true}) {
    CHECK(spell(hf, encode(hf, "abc", heap)) == "abc|");
    CHECK(spell(hf, encode(hf, "abab", heap)) == "a|b|a|b|");
    CHECK(spell(tk, encode(tk, "abab", heap)) == "ab|ab|");
  }
  CHECK_THROWS_WITH(BpeModel::from_merges(vocab, {{"x", "y"}}, false),
                    Contains("not in the vocabulary"));
  CHECK_THROWS_WITH(BpeModel::from_ranks({"a", "b"}), Contains("byte 0 is not a token"));
}

TEST_CASE("the Llama 3 pattern cuts text as tiktoken does", "[bpe]") {
  const Pretokenizer p(std::string(kLlama3Pattern), "test");
  using V = std::vector<std::string>;
  CHECK(pieces(p, "Hello world") == V{"Hello", " world"});
  CHECK(pieces(p, "I'M it'S they'LL") == V{"I", "'M", " it", "'S", " they", "'LL"});
  CHECK(pieces(p, "1234567") == V{"123", "456", "7"});
  CHECK(pieces(p, "a  b\t\tc") == V{"a", " ", " b", "\t", "\tc"});
  CHECK(pieces(p, "x\r\n\r\ny") == V{"x", "\r\n\r\n", "y"});
  CHECK(pieces(p, "end   ") == V{"end", "   "});
  CHECK(pieces(p, "ok!!\n") == V{"ok", "!!\n"});
  CHECK(pieces(p, "\xE6\x97\xA5\xE6\x9C\xAC 123") == V{"\xE6\x97\xA5\xE6\x9C\xAC", " ", "123"});
  CHECK_THROWS_WITH(pieces(p, "ok \xFF"), Contains("not valid UTF-8 at byte 4"));
  CHECK_THROWS_WITH(Pretokenizer("(unclosed", "tokenizer 'x'"),
                    Contains("tokenizer 'x': pre-tokenizer pattern does not compile"));
  const Pretokenizer digits(R"(\p{N}+)", "test");
  CHECK(pieces(digits, "ab12cd", false) == V{"12"});
  CHECK(pieces(digits, "ab12cd", true) == V{"ab", "12", "cd"});
  // Long runs of one class are one linear match each.
  const double t0 = thread_cpu_seconds();
  CHECK(pieces(p, std::string(1 << 20, ' ') + "x").size() == 2);
  CHECK(pieces(p, std::string(1 << 20, 'x')).size() == 1);
  CHECK(pieces(p, std::string(1 << 20, '\n')).size() == 1);
  CHECK(thread_cpu_seconds() - t0 < 20.0);
}

namespace {

nlohmann::json hf_json(const std::vector<std::string>& extra,
                       const std::vector<std::string>& merges) {
  nlohmann::json vocab = nlohmann::json::object();
  const auto tokens = byte_vocab(extra);
  for (std::size_t i = 0; i < tokens.size(); ++i) vocab[bytes_to_unicode(tokens[i])] = i;
  nlohmann::json j = {
      {"version", "1.0"},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern", {{"Regex", std::string(kLlama3Pattern)}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"added_tokens",
       {{{"id", 300}, {"content", "<|begin_of_text|>"}, {"special", true}},
        {{"id", 301}, {"content", "<|end_of_text|>"}, {"special", true}}}},
      {"model", {{"type", "BPE"}, {"ignore_merges", true}, {"vocab", vocab}, {"merges", merges}}}};
  return j;
}

}  // namespace

TEST_CASE("tokenizer.json: byte-level BPE read, anything else refused by name", "[bpe]") {
  const auto j = hf_json({" h", " hi"}, {"\xC4\xA0 h", "\xC4\xA0h i"});
  const auto spec = parse_hf_tokenizer_json(j.dump(), "tok.json");
  CHECK(spec.pattern == kLlama3Pattern);
  CHECK(spec.tokens.size() == 258);
  CHECK(spec.tokens[257] == " hi");
  CHECK(spec.merges.size() == 2);
  CHECK(spec.merges[1] == std::pair<std::string, std::string>{" h", "i"});
  CHECK(spec.bos == 300);
  CHECK(spec.eos == 301);
  CHECK(spec.ignore_merges);

  const auto tok = Tokenizer::from_bytes(j.dump(), "tok.json");
  CHECK(tok.kind() == Tokenizer::Kind::HuggingFace);
  CHECK(std::string(tok.file_name()) == "tokenizer.json");
  CHECK(tok.vocab_size() == 302);
  std::vector<int> ids;
  tok.encode("oh hi <|end_of_text|>", ids);
  CHECK(ids.size() == 2 + 1 + 16);  // o h, " hi", then " <|end_of_text|>" byte by byte
  CHECK(ids[2] == 257);
  CHECK(tok.decode(ids) == "oh hi <|end_of_text|>");
  CHECK(tok.decode({301}) == "<|end_of_text|>");
  CHECK_THROWS_AS(tok.decode({299}), std::out_of_range);

  // A template's BOS wins over the names.
  auto with_post = j;
  with_post["added_tokens"].push_back({{"id", 302}, {"content", "<start>"}, {"special", true}});
  with_post["post_processor"] = {{"type", "TemplateProcessing"},
                                 {"single",
                                  {{{"SpecialToken", {{"id", "<start>"}, {"type_id", 0}}}},
                                   {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}};
  CHECK(parse_hf_tokenizer_json(with_post.dump(), "t").bos == 302);

  auto unigram = j;
  unigram["model"]["type"] = "Unigram";
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(unigram.dump(), "tok.json"),
                    Contains("tok.json: its model is Unigram; expected a Hugging Face "
                             "tokenizer.json with a byte-level BPE model"));
  auto normalized = j;
  normalized["normalizer"] = {{"type", "NFKC"}};
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(normalized.dump(), "t"),
                    Contains("t: its normalizer is NFKC, which wireup-prep does not apply"));
  auto not_byte_level = j;
  not_byte_level["pre_tokenizer"] = {{"type", "Whitespace"}};
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(not_byte_level.dump(), "t"),
                    Contains("Whitespace step"));
  CHECK_THROWS_WITH(parse_hf_tokenizer_json("{\"model\": ", "t"), Contains("not valid JSON"));
  auto huge_id = j;  // refused, not a giant allocation
  huge_id["added_tokens"].push_back({{"id", 4000000000u}, {"content", "<x>"}, {"special", true}});
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(huge_id.dump(), "t"),
                    Contains("added token '<x>' has id 4000000000, not below 1546"));
  auto bad_merge = j;
  bad_merge["model"]["merges"] = {"\xC4\xA0 zz"};
  CHECK_THROWS_WITH(Tokenizer::from_bytes(bad_merge.dump(), "t"),
                    Contains("not in the vocabulary"));
}

TEST_CASE("the tokenizer kind comes from the content; others are named errors", "[bpe]") {
  CHECK_THROWS_WITH(Tokenizer::from_bytes("just some text\n", "tokenizer 'x.model'"),
                    Contains("tokenizer 'x.model': not a tokenizer wireup-prep reads") &&
                        Contains("a tiktoken BPE file") && Contains("tokenizer.json"));
  // A well-formed tiktoken file of a vocabulary wireup-prep does not know.
  CHECK_THROWS_WITH(Tokenizer::from_bytes(tiktoken_text(byte_vocab({"ab"})), "tokenizer 'y'"),
                    Contains("tokenizer 'y': a tiktoken BPE file of an unknown vocabulary (257 "
                             "tokens, sha256 ") &&
                        Contains("Llama 3 (128000 tokens), cl100k_base (100256 tokens)"));
  CHECK_THROWS_WITH(Tokenizer::load("/nonexistent/tokenizer.model"), Contains("cannot read"));
  CHECK(find_known_vocabulary(known_vocabularies()[0].sha256)->bos == 128000);
  CHECK(known_vocabularies()[0].specials.size() == 256);
  CHECK(known_vocabularies()[0].specials.back().text == "<|reserved_special_token_250|>");
  CHECK(known_vocabularies()[0].specials.back().id == 128255);
}
