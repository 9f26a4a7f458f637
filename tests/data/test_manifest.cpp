#include <catch2/catch.hpp>
#include <functional>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/error.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;

namespace {

Manifest sample() {
  Manifest m;
  m.token_bytes = 2;
  m.tokenizer = {"sentencepiece",
                 "tokenizer.model",
                 std::string(64, 'a'),
                 "/models/llama2.model",
                 32000,
                 1,
                 2};
  m.train.shards.push_back({"train-00000.bin", 4096 + 200 + 8 * 3, 100, 2, std::string(64, 'b')});
  m.train.shards.push_back({"train-00001.bin", 4096 + 100 + 8 * 2, 50, 1, std::string(64, 'c')});
  m.validation.shards.push_back(
      {"validation-00000.bin", 4096 + 20 + 16, 10, 1, std::string(64, 'd')});
  m.validation_fraction = 0.01;
  m.split_seed = 3;
  m.inputs.push_back({"corpus.jsonl.gz", 12345, 4});
  m.created_by = "wireup-prep 0.1.0";
  return m;
}

std::string with(const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(manifest_to_json(sample()));
  edit(j);
  return j.dump();
}

// `text` (a manifest's JSON) with `edit` applied.
std::string edited(const std::string& text, const std::function<void(nlohmann::json&)>& edit) {
  auto j = nlohmann::json::parse(text);
  edit(j);
  return j.dump();
}

}  // namespace

TEST_CASE("manifest round-trips through JSON with stable bytes", "[manifest]") {
  const auto m = sample();
  const auto text = manifest_to_json(m);
  CHECK(parse_manifest(text, "m.json") == m);
  CHECK(manifest_to_json(parse_manifest(text, "m.json")) == text);
  CHECK(m.train.tokens() == 150);
  CHECK(m.train.documents() == 3);
  CHECK(text.back() == '\n');
}

TEST_CASE("manifest loads from its directory or its path", "[manifest]") {
  test::TempDir dir;
  test::write_file(dir / "manifest.json", manifest_to_json(sample()));
  CHECK(load_manifest(dir.path()) == sample());
  CHECK(load_manifest(dir / "manifest.json") == sample());
  CHECK_THROWS_WITH(load_manifest(dir / "nope"),
                    Contains("nope") && Contains("cannot read manifest"));
}

TEST_CASE("corrupted manifests name the file and the field", "[manifest]") {
  using J = nlohmann::json;
  CHECK_THROWS_WITH(parse_manifest("{\"format\": ", "m.json"), Contains("m.json: not valid JSON"));
  CHECK_THROWS_WITH(parse_manifest("[]", "m.json"), Contains("top level"));
  // A number past double's range is nlohmann's out_of_range, not a parse_error (found by
  // fuzz_manifest): still the file's error.
  CHECK_THROWS_WITH(parse_manifest("{\"format\": 7333333333333E333333}", "m.json"),
                    Contains("m.json: not valid JSON") && Contains("number overflow"));
  CHECK_THROWS_WITH(parse_manifest(with([](J& j) { j["format"] = "megatron"; }), "m.json"),
                    Contains("m.json: field 'format'"));
  CHECK_THROWS_WITH(parse_manifest(with([](J& j) { j["version"] = 4; }), "m.json"),
                    Contains("field 'version'"));
  // Version 2 is a chat data set's: its shards' trained tokens are required.
  CHECK_THROWS_WITH(
      parse_manifest(with([](J& j) { j["version"] = 2; }), "m.json"),
      Contains("field 'splits.train.shards[0].trained_tokens'") && Contains("missing"));
  CHECK_THROWS_WITH(
      parse_manifest(with([](J& j) { j["splits"]["train"]["shards"][1].erase("sha256"); }),
                     "m.json"),
      Contains("field 'splits.train.shards[1].sha256'") && Contains("missing"));
  CHECK_THROWS_WITH(
      parse_manifest(with([](J& j) { j["splits"]["train"]["shards"][0]["sha256"] = "xyz"; }),
                     "m.json"),
      Contains("64 lowercase hex digits"));
  CHECK_THROWS_WITH(
      parse_manifest(with([](J& j) { j["splits"]["train"]["shards"][0]["tokens"] = -5; }),
                     "m.json"),
      Contains("'splits.train.shards[0].tokens': expected a non-negative integer"));
  CHECK_THROWS_WITH(
      parse_manifest(with([](J& j) { j["splits"]["train"]["tokens"] = 151; }), "m.json"),
      Contains("'splits.train.tokens': expected the sum of its shards' tokens (150)"));
  CHECK_THROWS_WITH(
      parse_manifest(
          with([](J& j) { j["splits"]["validation"]["shards"][0]["file"] = "../etc/passwd"; }),
          "m.json"),
      Contains("plain file name"));
  CHECK_THROWS_WITH(parse_manifest(with([](J& j) { j["token_bytes"] = 4; }), "m.json"),
                    Contains("'token_bytes': expected 2 for vocab_size 32000"));
  CHECK_THROWS_WITH(parse_manifest(with([](J& j) { j["tokenizer"]["bos_id"] = 32000; }), "m.json"),
                    Contains("tokenizer.bos_id"));
  CHECK_THROWS_WITH(
      parse_manifest(with([](J& j) { j["split"]["validation_fraction"] = 1.5; }), "m.json"),
      Contains("split.validation_fraction"));
  CHECK_THROWS_WITH(parse_manifest(with([](J& j) { j.erase("splits"); }), "m.json"),
                    Contains("field 'splits'"));
}

TEST_CASE("a chat manifest records the template, the mask rule and the counts", "[manifest]") {
  using J = nlohmann::json;
  Manifest m = sample();
  m.chat = ChatEntry{"llama3.1", "26 Jul 2024", "assistant", 3};
  m.train.shards[0].trained_tokens = 40;
  m.train.shards[1].trained_tokens = 20;
  m.validation.shards[0].trained_tokens = 4;
  const auto text = manifest_to_json(m);
  const auto j = J::parse(text);
  CHECK(j["version"] == 2);
  CHECK(j["chat"]["template"] == "llama3.1");
  CHECK(j["chat"]["train_on"] == "assistant");
  CHECK(j["chat"]["conversations"] == 4);
  CHECK(j["chat"]["tokens"] == 160);
  CHECK(j["chat"]["trained_tokens"] == 64);
  CHECK(j["chat"]["skipped_rows"] == 3);
  CHECK(j["splits"]["train"]["trained_tokens"] == 60);
  CHECK(parse_manifest(text, "m.json") == m);
  CHECK(manifest_to_json(parse_manifest(text, "m.json")) == text);
  CHECK_THROWS_WITH(
      parse_manifest(edited(text, [](J& e) { e["chat"]["trained_tokens"] = 65; }), "m.json"),
      Contains("'chat.trained_tokens': expected the trained_tokens of both splits (64)"));
  CHECK_THROWS_WITH(
      parse_manifest(edited(text, [](J& e) { e["chat"]["template"] = "chatml"; }), "m.json"),
      Contains("'chat.template'"));
  CHECK(parse_manifest(edited(text, [](J& e) { e["chat"]["template"] = "qwen3"; }), "m.json")
            .chat->chat_template == "qwen3");
  CHECK_THROWS_WITH(
      parse_manifest(edited(text, [](J& e) { e["chat"]["train_on"] = "user"; }), "m.json"),
      Contains("'chat.train_on'"));
  CHECK_THROWS_WITH(parse_manifest(edited(text, [](J& e) { e.erase("chat"); }), "m.json"),
                    Contains("field 'chat'"));
}

TEST_CASE("a preference manifest: pairs, whole in each shard, skipped rows by reason",
          "[manifest]") {
  using J = nlohmann::json;
  Manifest m = sample();
  for (auto* s : {&m.train.shards[0], &m.train.shards[1], &m.validation.shards[0]}) {
    s->documents = 2;
    s->trained_tokens = 5;
  }
  m.preference =
      PreferenceEntry{"conversational", "qwen3", "", 3, {{"missing_key", 2}, {"bad_json", 1}}};
  const auto text = manifest_to_json(m);
  const auto j = J::parse(text);
  CHECK(j["version"] == 3);
  CHECK(j["preference"]["pairs"] == 3);
  CHECK(j["preference"]["trained_tokens"] == 15);
  CHECK(j["preference"]["skipped_by_reason"]["missing_key"] == 2);
  CHECK(parse_manifest(text, "m.json") == m);
  CHECK(manifest_to_json(parse_manifest(text, "m.json")) == text);
  CHECK_THROWS_WITH(parse_manifest(edited(text,
                                          [](J& e) {
                                            e["splits"]["train"]["shards"][1]["documents"] = 3;
                                            e["splits"]["train"]["documents"] = 5;
                                          }),
                                   "m.json"),
                    Contains("'splits.train.shards[1].documents': expected an even count"));
  CHECK_THROWS_WITH(
      parse_manifest(edited(text, [](J& e) { e["preference"]["pairs"] = 4; }), "m.json"),
      Contains("'preference.pairs': expected half the documents of both splits (3)"));
  CHECK_THROWS_WITH(
      parse_manifest(
          edited(text, [](J& e) { e["preference"]["skipped_by_reason"]["bad_json"] = 2; }),
          "m.json"),
      Contains("'preference.skipped_by_reason': expected counts that sum to skipped_rows (3)"));
  CHECK_THROWS_WITH(
      parse_manifest(edited(text, [](J& e) { e["preference"]["template"] = ""; }), "m.json"),
      Contains("'preference.template'"));
  CHECK_THROWS_WITH(
      parse_manifest(edited(text, [](J& e) { e["preference"]["format"] = "pairs"; }), "m.json"),
      Contains("'preference.format'"));
  CHECK_THROWS_WITH(parse_manifest(edited(text, [](J& e) { e.erase("preference"); }), "m.json"),
                    Contains("field 'preference'"));
  CHECK_THROWS_WITH(parse_manifest(edited(text, [](J& e) { e["version"] = 4; }), "m.json"),
                    Contains("expected 1, 2 or 3"));
}
