// wireup-prep on preference rows with the real Llama 3 vocabulary: TRL's
// formats to masked shards, two documents a pair (chosen, rejected) whose ids
// and masks are the pair encoder's; pairs never split across shards or
// splits; bad rows named by file and line, or skipped and counted by reason;
// the version 3 manifest, which the loader reads in pair mode.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixtures.hpp"
#include "prep_fixtures.hpp"
#include "tokenizer_fixtures.hpp"
#include "wireup/chat/chat_encoder.hpp"
#include "wireup/chat/preference.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"
#include "wireup/inspect/inspect.hpp"
#include "wireup/prep/prep.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kChatPairs = {
    R"({"prompt": [{"role": "user", "content": "What color is the sky?"}], "chosen": [{"role": "assistant", "content": "Blue."}], "rejected": [{"role": "assistant", "content": "Green."}]})",
    R"({"chosen": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4"}], "rejected": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "Five, I think."}]})",
    R"({"prompt": [{"role": "user", "content": "日本語?"}], "chosen": [{"role": "assistant", "content": "はい 👍🏽"}], "rejected": [{"role": "assistant", "content": "No."}]})",
};

const std::vector<std::string> kTextPairs = {
    R"({"prompt": "The sky is", "chosen": " blue.", "rejected": " green."})",
    R"({"chosen": "The answer is yes.", "rejected": "The answer is no."})",
};

prep::PrepOptions options(const test::TempDir& dir, bool chat) {
  prep::PrepOptions o;
  o.inputs = {(dir / "in").string()};
  o.output = dir / "out";
  o.tokenizer = test::vocab_file("llama3.tiktoken");
  o.validation_fraction = 0;
  o.threads = 2;
  o.progress = false;
  if (chat) {
    o.chat.emplace();
    o.chat->tmpl = {chat::Template::Llama3, chat::TrainOn::Assistant, ""};
  }
  return o;
}

// Document `d` of a shard: its ids and mask.
std::pair<std::vector<std::uint32_t>, std::vector<std::uint8_t>> document(const data::ShardFile& f,
                                                                          std::size_t d) {
  const auto offsets = f.doc_offsets();
  std::vector<std::uint32_t> ids(offsets[d + 1] - offsets[d]);
  std::vector<std::uint8_t> mask(ids.size());
  f.read_tokens(offsets[d], ids.size(), ids.data());
  f.read_mask(offsets[d], mask.size(), mask.data());
  return {ids, mask};
}

// Every pair of the rows, in order, is two documents holding the encoder's ids.
void check_pairs(const fs::path& out, const data::Manifest& m, const std::vector<std::string>& rows,
                 const chat::PairEncoder& enc) {
  REQUIRE(m.train.shards.size() == 1);
  const data::ShardFile f(out / m.train.shards[0].file, data::ReadMode::Pread);
  CHECK(f.header().version == 2);
  REQUIRE(f.header().doc_count == 2 * rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CAPTURE(i);
    const auto want = enc.encode(chat::parse_preference_row(rows[i]));
    CHECK(document(f, 2 * i) == std::pair{want.chosen, want.chosen_mask});
    CHECK(document(f, 2 * i + 1) == std::pair{want.rejected, want.rejected_mask});
  }
}

}  // namespace

TEST_CASE("preference prep: chat pairs, two masked documents each", "[preference_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  test::write_rows(dir / "in" / "pairs.jsonl", kChatPairs);
  const auto o = options(dir, true);
  std::ostringstream log;
  auto logged = o;
  logged.log = &log;
  const auto m = prep::run_prep(logged);
  REQUIRE(m.preference.has_value());
  CHECK_FALSE(m.chat.has_value());
  CHECK(m.preference->format == "conversational");
  CHECK(m.preference->chat_template == "llama3");
  CHECK(m.add_bos);
  const chat::ChatEncoder chat(test::llama3(), "llama3", o.chat->tmpl);
  check_pairs(dir / "out", m, kChatPairs, chat::PairEncoder(test::llama3(), &chat));
  const auto json = nlohmann::json::parse(test::read_file(dir / "out" / "manifest.json"));
  CHECK(json["version"] == 3);
  CHECK(json["preference"]["pairs"] == kChatPairs.size());
  CHECK(json["preference"]["trained_tokens"] == m.train.trained_tokens());
  CHECK_THAT(log.str(),
             Contains("preference pairs (conversational, chat template llama3): 3 pairs"));
  prep::verify_dataset(dir / "out");
  // inspect names each pair's documents and marks the completions.
  std::ostringstream listing;
  prep::InspectOptions io;
  io.dataset = dir / "out";
  io.docs = 2;
  prep::inspect_dataset(io, listing);
  CHECK_THAT(listing.str(), Contains("pairs (conversational, chat template llama3): 3 pairs") &&
                                Contains("pair 0 chosen") && Contains("pair 0 rejected") &&
                                Contains("(marked *) \"Blue.<|eot_id|>\"") &&
                                Contains("(marked *) \"Green.<|eot_id|>\""));
  // The loader reads it in pair mode (test_loader_pairs.cpp); wireup-train refuses
  // it until DPO lands (tests/trainer/bad_input.sh).
  data::LoaderConfig c;
  c.manifest = dir / "out";
  c.context = 64;
  CHECK(data::TokenLoader(c).paired());
  // Without --chat-template, a chat pair is refused, naming the option.
  auto text_only = options(dir, false);
  text_only.force = true;
  CHECK_THROWS_WITH(prep::run_prep(text_only),
                    Contains("pairs.jsonl: its first row is a conversational pair") &&
                        Contains("needs --chat-template"));
}

TEST_CASE("preference prep: text pairs end with EOS", "[preference_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  test::write_rows(dir / "in" / "pairs.jsonl", kTextPairs);
  const auto m = prep::run_prep(options(dir, false));
  REQUIRE(m.preference.has_value());
  CHECK(m.preference->format == "text");
  CHECK(m.preference->chat_template.empty());
  CHECK(m.add_eos);
  check_pairs(dir / "out", m, kTextPairs, chat::PairEncoder(test::llama3(), nullptr));
  // --chat-template does not apply to text pairs (TRL renders only conversations).
  auto with_template = options(dir, true);
  with_template.force = true;
  const auto t = prep::run_prep(with_template);
  CHECK(t.preference->format == "text");
  CHECK(t.preference->chat_template.empty());
  CHECK(t.add_eos);
  CHECK(t.train.shards[0].sha256 == m.train.shards[0].sha256);
  // A data set is of one format, its first row's.
  test::write_rows(dir / "in" / "pairs.jsonl", {kTextPairs[0], kChatPairs[0]});
  CHECK_THROWS_WITH(prep::run_prep(with_template),
                    Contains("pairs.jsonl:2: a conversational pair in a data set of text pairs"));
}

TEST_CASE("preference prep: a pair is never split across shards or splits", "[preference_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  std::vector<std::string> rows;
  for (int i = 0; i < 40; ++i)
    rows.push_back(R"({"prompt": "Q)" + std::to_string(i) +
                   R"(", "chosen": " yes", "rejected": " no, not at all"})");
  test::write_rows(dir / "in" / "pairs.jsonl", rows);
  auto o = options(dir, false);
  o.shard_tokens = 25;  // about one and a half pairs a shard
  o.validation_fraction = 0.3;
  const auto m = prep::run_prep(o);
  CHECK(m.train.shards.size() > 5);
  CHECK_FALSE(m.validation.shards.empty());
  CHECK(m.train.documents() + m.validation.documents() == 2 * rows.size());
  for (const auto* split : {&m.train, &m.validation})
    for (const auto& s : split->shards) {
      CAPTURE(s.file);
      CHECK(s.documents % 2 == 0);
      // Each shard holds whole pairs: a chosen document, then its rejected one.
      const data::ShardFile f(dir / "out" / s.file, data::ReadMode::Pread);
      for (std::size_t d = 0; d < s.documents; d += 2) {
        const auto chosen = document(f, d).first, rejected = document(f, d + 1).first;
        CHECK(test::llama3().decode({chosen.end()[-2]}) == " yes");
        CHECK(test::llama3().decode({rejected.end()[-2]}) == " all");
      }
    }
  prep::verify_dataset(dir / "out");
}

TEST_CASE("preference prep: bad rows named, or skipped and counted by reason",
          "[preference_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  auto o = options(dir, false);
  const auto fails = [&](const std::string& row, const std::string& what) {
    test::write_rows(dir / "in" / "pairs.jsonl", {kTextPairs[0], "", row, kTextPairs[1]});
    CAPTURE(row);
    CHECK_THROWS_WITH(prep::run_prep(o),
                      Contains("pairs.jsonl:3: " + what) && Contains("(or pass --skip-bad-rows)"));
    CHECK_FALSE(fs::exists(dir / "out" / "manifest.json"));
  };
  fails(R"({"prompt": "q", "chosen": "a"})", "no 'rejected'");
  fails(R"({"prompt": "q", "chosen": "", "rejected": "b"})", "'chosen': an empty completion");
  fails(R"({"chosen": )", "bad JSON line");
  fails(R"({"prompt": "The sky is ", "chosen": "blue.", "rejected": "green."})",
        "the ids of prompt + chosen do not start with the prompt's ids");

  test::write_rows(dir / "in" / "pairs.jsonl",
                   {kTextPairs[0], R"({"prompt": "q", "chosen": "a"})", "not json",
                    R"({"prompt": "q", "chosen": "", "rejected": "b"})",
                    R"({"prompt": "The sky is ", "chosen": "blue.", "rejected": "green."})",
                    R"({"messages": [{"role": "user", "content": "a chat row"}]})", kTextPairs[1]});
  o.skip_bad_rows = true;
  std::ostringstream log;
  o.log = &log;
  const auto m = prep::run_prep(o);
  REQUIRE(m.preference.has_value());
  CHECK(m.preference->skipped_rows == 5);
  CHECK(
      m.preference->skipped_by_reason ==
      std::map<std::string, std::uint64_t>{
          {"bad_json", 1}, {"empty_completion", 1}, {"missing_key", 2}, {"prompt_not_prefix", 1}});
  CHECK(m.train.documents() == 4);
  CHECK_THAT(log.str(),
             Contains("skipped 5 bad row(s) (--skip-bad-rows): bad_json=1 "
                      "empty_completion=1 missing_key=2 prompt_not_prefix=1; the first: ") &&
                 Contains("pairs.jsonl:2: no 'rejected'"));
  const auto json = nlohmann::json::parse(test::read_file(dir / "out" / "manifest.json"));
  CHECK(json["preference"]["skipped_by_reason"]["missing_key"] == 2);
}
