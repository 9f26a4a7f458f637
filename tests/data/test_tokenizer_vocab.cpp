// wireup-prep's tokenizer on the real Llama 3 and cl100k_base vocabularies
// (tests/data/vocab/fetch-vocab.sh puts them in WIREUP_VOCAB_DIR): ids known
// from tiktoken (tiktoken_parity.py compares many more in the lane that has
// python3-tiktoken), exact round trips, long runs, and wireup-prep end to end.
#include <catch2/catch.hpp>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "prep.hpp"
#include "tokenizer.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// CPU seconds of this thread: a bound on it catches quadratic work without
// failing on a loaded machine (wall time would).
inline double thread_cpu_seconds() {
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

const prep::Tokenizer& llama3() {
  static const auto t = prep::Tokenizer::load(vocab_file("llama3.tiktoken"));
  return t;
}

std::vector<int> ids_of(const prep::Tokenizer& t, std::string_view text) {
  std::vector<int> ids;
  t.encode(text, ids);
  return ids;
}

// Texts of every kind the tests use: scripts, emoji with ZWJ, digit and
// whitespace runs, tabs, CRLF, contractions in any case, special spellings.
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

}  // namespace

TEST_CASE("Llama 3's tokenizer.model: ids as tiktoken's, exact round trips", "[vocab]") {
  const auto& t = llama3();
  CHECK(t.kind() == prep::Tokenizer::Kind::Tiktoken);
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
  const auto t = prep::Tokenizer::load(vocab_file("cl100k_base.tiktoken"));
  CHECK(t.vocab_size() == 100277);
  CHECK(t.bos_id() == -1);
  CHECK(t.eos_id() == 100257);
  CHECK(ids_of(t, "hello world") == std::vector<int>{15339, 1917});
  CHECK(t.decode({100257, 100276}) == "<|endoftext|><|endofprompt|>");
  CHECK_THROWS_AS(t.decode({100261}), std::out_of_range);  // an id cl100k_base leaves unused
  for (const auto& text : kTexts) CHECK(t.decode(ids_of(t, text)) == text);
}

TEST_CASE("wireup-prep with Llama 3's tokenizer.model: uint32 shards, vocab 128256", "[vocab]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  std::string corpus;
  for (const auto& text : kTexts) corpus += text + "\n%\n";
  { std::ofstream(dir / "in" / "docs.txt") << corpus; }
  prep::PrepOptions o;
  o.inputs = {(dir / "in").string()};
  o.output = dir / "out";
  o.tokenizer = vocab_file("llama3.tiktoken");
  o.docs.separator.emplace(1, '%');
  o.validation_fraction = 0;
  o.threads = 2;
  o.progress = false;
  const auto m = prep::run_prep(o);
  CHECK(m.token_bytes == 4);
  CHECK(m.tokenizer.type == "tiktoken");
  CHECK(m.tokenizer.file == "tokenizer.model");
  CHECK(m.tokenizer.vocab_size == 128256);
  CHECK(m.tokenizer.bos_id == 128000);
  CHECK(m.tokenizer.eos_id == 128001);
  const auto json = nlohmann::json::parse(test::read_file(dir / "out" / "manifest.json"));
  CHECK(json["tokenizer"]["vocab_size"] == 128256);
  CHECK(json["tokenizer"]["bos_id"] == 128000);
  CHECK(test::read_file(dir / "out" / "tokenizer.model") ==
        test::read_file(vocab_file("llama3.tiktoken")));
  REQUIRE(m.train.shards.size() == 1);
  const data::ShardFile f(dir / "out" / m.train.shards[0].file, data::ReadMode::Pread);
  CHECK(f.header().vocab_size == 128256);
  const auto offsets = f.doc_offsets();
  REQUIRE(offsets.size() == 9);  // documents, in input order ("     x" is kept; blank ones not)
  const auto& tok = llama3();
  for (std::size_t d = 0; d + 1 < offsets.size(); ++d) {
    std::vector<std::uint32_t> ids(offsets[d + 1] - offsets[d]);
    f.read_tokens(offsets[d], ids.size(), ids.data());
    CHECK(ids.front() == 128000);
    CHECK(ids.back() == 128001);
    std::string want = kTexts[d];  // a line's \r before its \n is dropped
    for (auto at = want.find("\r\n"); at != std::string::npos; at = want.find("\r\n"))
      want.erase(at, 1);
    CHECK(tok.decode(std::vector<int>(ids.begin() + 1, ids.end() - 1)) == want);
  }
  prep::verify_dataset(dir / "out");

  // Invalid UTF-8 in the input: an error naming the file and line.
  std::ofstream(dir / "in" / "docs.txt", std::ios::app) << "fine\nbad \xFF here\n";
  o.force = true;
  CHECK_THROWS_WITH(prep::run_prep(o), Contains("docs.txt:") && Contains("not valid UTF-8"));
}
