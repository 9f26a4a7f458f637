// generate's tokenizer served by a child `wireup-prep serve-tokenizer`
// (what a SentencePiece model takes in wireup-train, whose LibTorch clashes
// with its protobuf runtime) against the same file loaded in this process
// (no LibTorch here): the same vocabulary, BOS/EOS, ids and text; a bad
// request named without ending the child; a file it cannot load refused by
// name.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "generate/prompt_tokenizer.hpp"
#include "wireup/error.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

using namespace wireup::train::generate;
namespace tok = wireup::tokenizer;

namespace {

// A small SentencePiece BPE model trained here, written to a file.
std::string sentencepiece_file(const std::filesystem::path& dir) {
  std::vector<std::string> lines;
  for (int i = 0; i < 300; ++i)
    lines.push_back("the quick brown fox " + std::to_string(i) + " jumps over the lazy dog");
  const std::string bytes = tok::train_sentencepiece(lines, {300, "bpe"});
  const auto path = dir / "tokenizer.model";
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

}  // namespace

TEST_CASE("a served tokenizer gives the ids and text of the same file loaded here") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("wireup-served-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = sentencepiece_file(dir);
  const tok::Tokenizer here = tok::Tokenizer::load(file);
  const PromptTokenizer served = PromptTokenizer::served(WIREUP_PREP, file, "--tokenizer");
  CHECK(served.local() == nullptr);
  CHECK(served.vocab_size() == here.vocab_size());
  CHECK(served.bos_id() == here.bos_id());
  CHECK(served.eos_id() == here.eos_id());
  CHECK(served.special_id("<|eot_id|>") == -1);
  for (const std::string& text :
       std::vector<std::string>{"the lazy dog", "", "fox 123 jumps\nover\ttabs  and  spaces",
                                std::string("caf\xc3\xa9 \xe2\x82\xac 42", 10)}) {
    std::vector<int> want;
    here.encode(text, want);
    INFO(text);
    CHECK(served.encode(text) == want);
    CHECK(served.decode(want) == here.decode(want));
  }
  // An id outside the vocabulary: named, and the child still answers.
  CHECK_THROWS_WITH(served.decode({99999}), Catch::Contains("--tokenizer " + file));
  CHECK(served.encode("the") == served.encode("the"));
  // A file the child cannot load: InputError naming it.
  std::ofstream(dir / "not-a-tokenizer") << "hello\n";
  CHECK_THROWS_AS(
      PromptTokenizer::served(WIREUP_PREP, (dir / "not-a-tokenizer").string(), "--tokenizer"),
      wireup::InputError);
  CHECK_THROWS_WITH(PromptTokenizer::served("/nonexistent/wireup-prep", file, "--tokenizer"),
                    Catch::Contains("cannot start /nonexistent/wireup-prep"));
  std::filesystem::remove_all(dir);
}
