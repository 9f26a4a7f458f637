// wireup-prep end to end with the real Llama 3 vocabulary (Meta's
// tokenizer.model, from tests/data/vocab/fetch-vocab.sh): uint32 shards that
// decode to the input, and invalid UTF-8 named by file and line.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "tokenizer_fixtures.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"
#include "wireup/prep/prep.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
using test::kTexts;
using test::llama3;
using test::vocab_file;
namespace fs = std::filesystem;

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
