// wireup-prep --chat-template with the real Llama 3 vocabulary: conversations
// to masked shards whose tokens and mask are the chat encoder's, the chat
// manifest, packed loading of the result, .zst input, bad rows named by file
// and line (or counted with --skip-bad-rows).
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "fixtures.hpp"
#include "prep_fixtures.hpp"
#include "tokenizer_fixtures.hpp"
#include "wireup/chat/chat_encoder.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"
#include "wireup/inspect/inspect.hpp"
#include "wireup/prep/prep.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kRows = {
    R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "4."}]})",
    R"({"prompt": "Capital of France?", "completion": "Paris."})",
    R"({"messages": [{"role": "user", "content": "Say <|eot_id|>"}, {"role": "assistant", "content": "<|eot_id|> is text here."}, {"role": "user", "content": "Thanks"}, {"role": "assistant", "content": "  You are welcome.\n"}]})",
    R"({"id": 4, "messages": [{"role": "user", "content": "日本語?"}, {"role": "assistant", "content": "はい 👍🏽"}]})",
};

prep::PrepOptions chat_options(const test::TempDir& dir, chat::TrainOn train_on) {
  prep::PrepOptions o;
  o.inputs = {(dir / "in").string()};
  o.output = dir / "out";
  o.tokenizer = test::vocab_file("llama3.tiktoken");
  o.validation_fraction = 0;
  o.threads = 2;
  o.progress = false;
  o.chat.emplace();
  o.chat->tmpl = {chat::Template::Llama31, train_on, "26 Jul 2024"};
  return o;
}

}  // namespace

TEST_CASE("chat prep: shards hold each conversation's ids and loss mask", "[chat_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  test::write_rows(dir / "in" / "chats.jsonl", kRows);
  for (const auto train_on : {chat::TrainOn::Assistant, chat::TrainOn::LastAssistant}) {
    auto o = chat_options(dir, train_on);
    o.force = true;
    const auto m = prep::run_prep(o);
    REQUIRE(m.chat.has_value());
    CHECK(m.chat->chat_template == "llama3.1");
    CHECK(m.chat->train_on == chat::train_on_name(train_on));
    CHECK(m.add_bos);
    CHECK_FALSE(m.add_eos);
    REQUIRE(m.train.shards.size() == 1);
    const data::ShardFile f(dir / "out" / m.train.shards[0].file, data::ReadMode::Pread);
    CHECK(f.header().version == 2);
    CHECK(f.header().eos_id == data::kNoToken);
    const auto offsets = f.doc_offsets();
    REQUIRE(offsets.size() == kRows.size() + 1);
    const chat::ChatEncoder enc(test::llama3(), "llama3", o.chat->tmpl);
    std::uint64_t trained = 0;
    for (std::size_t d = 0; d < kRows.size(); ++d) {
      std::vector<std::uint32_t> want_ids, ids(offsets[d + 1] - offsets[d]);
      std::vector<std::uint8_t> want_mask, mask(ids.size());
      enc.encode(chat::parse_row(kRows[d]), want_ids, want_mask);
      f.read_tokens(offsets[d], ids.size(), ids.data());
      f.read_mask(offsets[d], mask.size(), mask.data());
      CHECK(ids == want_ids);
      CHECK(mask == want_mask);
      for (const auto b : mask) trained += b;
    }
    CHECK(trained == f.header().trained_count);
    CHECK(m.train.trained_tokens() == trained);
    const auto json = nlohmann::json::parse(test::read_file(dir / "out" / "manifest.json"));
    CHECK(json["version"] == 2);
    CHECK(json["chat"]["conversations"] == kRows.size());
    CHECK(json["chat"]["trained_tokens"] == trained);
    CHECK(json["chat"]["date_string"] == "26 Jul 2024");
    prep::verify_dataset(dir / "out");
  }
  // inspect marks the trained ids and shows their text (last-assistant: the
  // third conversation's second answer only).
  std::ostringstream listing;
  prep::InspectOptions io;
  io.dataset = dir / "out";
  io.docs = 3;
  prep::inspect_dataset(io, listing);
  CHECK_THAT(listing.str(), Contains("train on last-assistant") && Contains(" 128009*\n") &&
                                Contains("(marked *) \"You are welcome.<|eot_id|>\"\n"));
  CHECK_THAT(listing.str(), !Contains("\"<|eot_id|> is text here.<|eot_id|>\""));
  // The loader packs them: each row's trained tokens are the mask's.
  data::LoaderConfig c;
  c.manifest = dir / "out";
  c.context = 127;
  c.batch_size = 1;
  c.shuffle = false;
  data::TokenLoader loader(c);
  CHECK(loader.packed());
  data::Batch b;
  REQUIRE(loader.next(b));
  CHECK(b.token(0, 0) == 128000);
  CHECK(b.segments[0] == 0);
}

TEST_CASE("chat prep: .zst input gives the same shards as plain JSONL", "[chat_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  test::write_rows(dir / "in" / "chats.jsonl", kRows);
  auto o = chat_options(dir, chat::TrainOn::Assistant);
  const auto plain = prep::run_prep(o);
  const std::string cmd = "zstd -q --rm " + (dir / "in" / "chats.jsonl").string();
  REQUIRE(std::system(cmd.c_str()) == 0);
  REQUIRE(fs::exists(dir / "in" / "chats.jsonl.zst"));
  o.force = true;
  const auto packed = prep::run_prep(o);
  CHECK(packed.train.shards[0].sha256 == plain.train.shards[0].sha256);
}

TEST_CASE("chat prep: bad rows are named by file and line, or skipped and counted", "[chat_prep]") {
  test::TempDir dir;
  fs::create_directories(dir / "in");
  auto o = chat_options(dir, chat::TrainOn::Assistant);
  const auto fails = [&](const std::string& row, const std::string& what) {
    test::write_rows(dir / "in" / "chats.jsonl", {kRows[0], "", row, kRows[1]});
    CAPTURE(row);
    CHECK_THROWS_WITH(prep::run_prep(o),
                      Contains("chats.jsonl:3: " + what) && Contains("(or pass --skip-bad-rows)"));
    CHECK_FALSE(fs::exists(dir / "out" / "manifest.json"));
  };
  fails(
      R"({"messages": [{"role": "tool", "content": "x"}, {"role": "assistant", "content": "y"}]})",
      "'messages[0]'.role: unknown role \"tool\"");
  fails(
      R"({"messages": [{"role": "user", "content": ["a"]}, {"role": "assistant", "content": "y"}]})",
      "'messages[0]'.content: expected a string, found a list");
  fails(R"({"messages": [{"role": "user", "content": "only a question"}]})",
        "no assistant message");
  fails(R"({"messages": [)", "bad JSON line");
  fails(R"({"text": "a pretraining row"})", "expected a JSON object with 'messages'");

  test::write_rows(dir / "in" / "chats.jsonl",
                   {kRows[0], R"({"messages": []})", kRows[1], "not json", kRows[2]});
  o.skip_bad_rows = true;
  std::ostringstream log;
  o.log = &log;
  const auto m = prep::run_prep(o);
  CHECK(m.chat->skipped_rows == 2);
  CHECK(m.train.documents() == 3);
  CHECK(m.inputs[0].documents == 3);
  CHECK_THAT(log.str(), Contains("skipped 2 bad row(s) (--skip-bad-rows); the first: ") &&
                            Contains("chats.jsonl:2: no assistant message"));
  CHECK_THAT(log.str(), Contains("chat template llama3.1, train on assistant: 3 conversations"));

  // Text input is not conversations.
  fs::remove(dir / "in" / "chats.jsonl");
  { std::ofstream(dir / "in" / "notes.txt") << "plain text\n"; }
  o.force = true;
  CHECK_THROWS_WITH(prep::run_prep(o), Contains("notes.txt: --chat-template reads JSONL"));
  // A trained tokenizer has no chat tokens.
  o.tokenizer.reset();
  o.vocab_size = 300;
  CHECK_THROWS_WITH(prep::run_prep(o), Contains("--chat-template needs --tokenizer"));
}
