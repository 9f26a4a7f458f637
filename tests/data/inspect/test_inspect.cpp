// wireup-prep inspect: the formatting (plain functions) and the listing of a
// data set wireup-prep itself prepared.
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "prep_fixtures.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"
#include "wireup/inspect/inspect.hpp"
#include "wireup/inspect/inspect_format.hpp"
#include "wireup/prep/documents.hpp"
#include "wireup/prep/prep.hpp"
#include "wireup/text.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::string inspect(const prep::InspectOptions& o) {
  std::ostringstream out;
  prep::inspect_dataset(o, out);
  return out.str();
}

}  // namespace

TEST_CASE("documents are chosen in storage order, shard by shard", "[inspect]") {
  using R = prep::DocRef;
  const auto all = [](const std::vector<std::uint64_t>& docs) {
    std::vector<R> out;
    for (auto r = prep::first_document(docs); r; r = prep::next_document(docs, *r))
      out.push_back(*r);
    return out;
  };
  CHECK(all({2, 0, 3}) == std::vector<R>{{0, 0, 0}, {0, 1, 1}, {2, 0, 2}, {2, 1, 3}, {2, 2, 4}});
  CHECK(all({0, 0, 1, 0}) == std::vector<R>{{2, 0, 0}});
  CHECK(all({5}).size() == 5);
  CHECK(all({}).empty());
  CHECK(all({0, 0}).empty());
}

TEST_CASE("text_ids drops the BOS and EOS markers at the ends only", "[inspect]") {
  CHECK(prep::text_ids({1, 5, 1, 2, 9, 2}, 1, 2) == std::vector<int>{5, 1, 2, 9});
  CHECK(prep::text_ids({1, 5, 2}, -1, -1) == std::vector<int>{1, 5, 2});
  CHECK(prep::text_ids({1, 5, 9}, 1, 2) == std::vector<int>{5, 9});  // cut short: no EOS
  CHECK(prep::text_ids({1}, 1, 1).empty());
  CHECK(prep::text_ids({}, 1, 2).empty());
  CHECK(prep::text_ids({128000, 40, 128001}, 128000, 128001) == std::vector<int>{40});
}

TEST_CASE("header and document blocks, exactly", "[inspect]") {
  prep::DatasetFacts f;
  f.manifest = "data/manifest.json";
  f.created_by = "wireup-prep 0.1.0";
  f.vocab_size = 128256;
  f.bos_id = 128000;
  f.eos_id = 128001;
  f.add_bos = true;
  f.add_eos = false;
  f.token_bytes = 4;
  f.tokenizer_type = "sentencepiece";
  f.tokenizer_file = "tokenizer.model";
  f.tokenizer_sha256 = "ab12";
  f.tokenizer_source = "/models/tok.model";
  f.decoder = "data/tokenizer.model";
  f.splits = {{"train", 2, 10, 1000}, {"validation", 1, 1, 7}};
  CHECK(prep::format_header(f) ==
        "dataset     data/manifest.json (wireup-prep 0.1.0)\n"
        "tokenizer   sentencepiece, tokenizer.model (source: /models/tok.model), sha256 ab12\n"
        "decoded by  data/tokenizer.model\n"
        "vocabulary  128256 pieces, bos 128000 (before every document), eos 128001 (not added)\n"
        "token type  uint32 (4 bytes, little-endian)\n"
        "train       2 shards, 10 documents, 1000 tokens\n"
        "validation  1 shard, 1 document, 7 tokens\n");

  prep::DocView d;
  d.split = "train";
  d.ref = {1, 4, 9};
  d.shard_file = "train-00001.bin";
  d.first_token = 100;
  d.tokens = 3;
  d.ids = {1, 17, 2};
  d.text = "Hi\n\"there\"";
  CHECK(prep::format_document(d) ==
        "\ntrain document 9: train-00001.bin document 4, tokens 100..102 (3 tokens)\n"
        "  ids  1 17 2\n"
        "  text \"Hi\\n\\\"there\\\"\"\n");
  d.tokens = 50;
  CHECK(prep::format_document(d) ==
        "\ntrain document 9: train-00001.bin document 4, tokens 100..149 (50 tokens)\n"
        "  ids  1 17 2 ... (47 more; --max-tokens)\n"
        "  text \"Hi\\n\\\"there\\\"\" ...\n");
}

TEST_CASE("inspect shows a chat data set's mask: trained ids marked, their text", "[inspect]") {
  prep::DatasetFacts f;
  f.manifest = "chat/manifest.json";
  f.vocab_size = 128256;
  f.token_bytes = 4;
  f.splits = {{"train", 1, 3, 159}};
  f.chat = prep::ChatFacts{"llama3.1", "26 Jul 2024", "assistant", 3, 159, 23, 2};
  CHECK_THAT(prep::format_header(f),
             Contains("\nchat        llama3.1 (Today Date 26 Jul 2024), train on assistant: 3 "
                      "conversations, 159 tokens, 23 trained, 2 bad rows skipped\n"));
  CHECK(prep::trained_spans({0, 1, 1, 0, 0, 1, 0, 1}) ==
        std::vector<std::pair<std::size_t, std::size_t>>{{1, 3}, {5, 6}, {7, 8}});
  CHECK(prep::trained_spans({0, 0}).empty());
  prep::DocView d;
  d.split = "train";
  d.shard_file = "train-00000.bin";
  d.tokens = 6;
  d.ids = {128000, 882, 271, 19, 13, 128009};
  d.mask = {0, 0, 0, 1, 1, 1};
  d.text = "user\n\n4.<|eot_id|>";
  d.trained_runs = {"4.<|eot_id|>"};
  CHECK(prep::format_document(d) ==
        "\ntrain document 0: train-00000.bin document 0, tokens 0..5 (6 tokens)\n"
        "  ids  128000 882 271 19* 13* 128009*\n"
        "  text \"user\\n\\n4.<|eot_id|>\"\n"
        "  trained 3 of 6 ids shown (marked *) \"4.<|eot_id|>\"\n");
}

TEST_CASE("inspect lists what wireup-prep wrote: facts, ids and text in storage order",
          "[inspect]") {
  test::TempDir dir;
  const fs::path gpl = "/usr/share/common-licenses/GPL-3";
  const auto docs = test::paragraphs(gpl);
  prep::PrepOptions p;
  p.inputs = {gpl.string()};
  p.output = dir / "out";
  p.vocab_size = 400;
  p.docs.text_docs = prep::TextDocs::Paragraph;
  p.validation_fraction = 0;
  p.shard_tokens = 4000;  // several shards
  p.threads = 2;
  p.progress = false;
  const auto m = prep::run_prep(p);
  REQUIRE(m.train.shards.size() >= 3);
  REQUIRE(m.train.documents() == docs.size());

  prep::InspectOptions o;
  o.dataset = dir / "out";
  o.docs = m.train.shards[0].documents + 2;  // into the second shard
  o.max_tokens = 100000;
  const auto text = inspect(o);
  CHECK_THAT(text, Contains("dataset     " + (dir / "out" / "manifest.json").string()));
  CHECK_THAT(text, Contains("vocabulary  400 pieces, bos 1 (before every document), eos 2 (after "
                            "every document)\n"));
  CHECK_THAT(text, Contains("token type  uint16"));
  CHECK_THAT(text, Contains("train       " + std::to_string(m.train.shards.size()) + " shards, " +
                            std::to_string(docs.size()) + " documents, " +
                            std::to_string(m.train.tokens()) + " tokens\n"));
  CHECK_THAT(text, Contains("validation  0 shards, 0 documents, 0 tokens\n"));
  CHECK_THAT(text, Contains("sha256 " + m.tokenizer.sha256));

  // Each shown document: its place, the shard's ids, the input's text.
  std::size_t at = 0;
  for (std::uint64_t i = 0; i < o.docs; ++i) {
    const std::size_t shard = i < m.train.shards[0].documents ? 0 : 1;
    const std::uint64_t doc = shard == 0 ? i : i - m.train.shards[0].documents;
    const data::ShardFile f(dir / "out" / m.train.shards[shard].file, data::ReadMode::Pread);
    const auto offsets = f.doc_offsets();
    std::vector<std::uint32_t> ids(offsets[doc + 1] - offsets[doc]);
    f.read_tokens(offsets[doc], ids.size(), ids.data());
    std::string id_line = "  ids ";
    for (const auto id : ids) id_line += " " + std::to_string(id);
    const std::string block =
        "\ntrain document " + std::to_string(i) + ": " + m.train.shards[shard].file + " document " +
        std::to_string(doc) + ", tokens " + std::to_string(offsets[doc]) + ".." +
        std::to_string(offsets[doc + 1] - 1) + " (" + std::to_string(ids.size()) + " tokens)\n" +
        id_line + "\n" + "  text \"" + escape_text(docs[i]) + "\"\n";
    INFO("document " << i);
    const auto found = text.find(block, at);
    REQUIRE(found != std::string::npos);
    at = found + block.size();
  }
  CHECK(at == text.size());  // nothing after the last document asked for

  SECTION("--max-tokens cuts ids and text") {
    o.docs = 1;
    o.max_tokens = 5;
    const auto cut = inspect(o);
    CHECK_THAT(cut, Contains(" more; --max-tokens)\n  text \""));
    CHECK(cut.substr(cut.size() - 5) == " ...\n");
  }
  SECTION("more documents than the split holds: all of them, and a note") {
    o.docs = 100000;
    o.max_tokens = 1;
    const auto all = inspect(o);
    CHECK_THAT(all, Contains("\ntrain document " + std::to_string(docs.size() - 1) + ": "));
    CHECK_THAT(all, Contains("\n(train holds " + std::to_string(docs.size()) + " documents)\n"));
  }
  SECTION("an empty split") {
    o.split = "validation";
    CHECK_THAT(inspect(o), Contains("\nvalidation: no documents\n"));
  }
  SECTION("the tokenizer from --tokenizer, when the data set's copy is gone") {
    fs::rename(dir / "out" / "tokenizer.model", dir / "tok.model");
    CHECK_THROWS_WITH(inspect(o), Contains("tokenizer.model: the data set's tokenizer") &&
                                      Contains("is missing") && Contains("--tokenizer FILE"));
    o.tokenizer = dir / "tok.model";
    CHECK(inspect(o).find("decoded by  " + (dir / "tok.model").string() +
                          " (--tokenizer, the same bytes as the manifest's)\n") !=
          std::string::npos);
  }
  SECTION("a tokenizer that does not match is refused") {
    auto other = p;
    other.output = dir / "other";
    other.vocab_size = 350;
    prep::run_prep(other);
    o.tokenizer = dir / "other" / "tokenizer.model";
    CHECK_THROWS_WITH(inspect(o), Contains("has a vocabulary of 350 pieces but the data set's "
                                           "manifest records tokenizer.vocab_size 400"));
    o.tokenizer.reset();
    fs::copy_file(dir / "other" / "tokenizer.model", dir / "out" / "tokenizer.model",
                  fs::copy_options::overwrite_existing);
    CHECK_THROWS_WITH(inspect(o), Contains("tokenizer.model: SHA-256 does not match the manifest"));
  }
  SECTION("bad input") {
    o.dataset = dir / "missing";
    CHECK_THROWS_WITH(inspect(o), Contains("missing: cannot read manifest"));
    o.dataset = dir / "out";
    o.split = "test";
    CHECK_THROWS_WITH(inspect(o), Contains("--split 'test': expected train or validation"));
    o.split = "train";
    o.docs = 0;
    CHECK_THROWS_WITH(inspect(o), Contains("--docs must be at least 1"));
  }
  SECTION("a corrupt shard: an error naming it, and nothing printed") {
    const auto shard = dir / "out" / m.train.shards[0].file;
    auto bytes = test::read_file(shard);
    bytes[4096 + 2] = '\xff';  // token 1 becomes 0x..ff, past the vocabulary
    bytes[4096 + 3] = '\xff';
    test::write_file(shard, bytes);
    std::ostringstream out;
    CHECK_THROWS_WITH(prep::inspect_dataset(o, out),
                      Contains(shard.string() + ": token 1 has id 65535, outside the vocabulary"));
    CHECK(out.str().empty());
    // In the second document: the first is listed, then the error.
    const auto second_doc = data::ShardFile(shard, data::ReadMode::Pread).doc_offsets()[1];
    const auto second = 4096 + 2 * second_doc;
    bytes[4096 + 2] = bytes[4096 + 3] = 0;
    bytes[second + 2] = bytes[second + 3] = '\xff';
    test::write_file(shard, bytes);
    std::ostringstream partial;
    CHECK_THROWS_WITH(prep::inspect_dataset(o, partial),
                      Contains(": token " + std::to_string(second_doc + 1) + " has id"));
    CHECK_THAT(partial.str(), Contains("\ntrain document 0: "));
    CHECK(partial.str().find("train document 1") == std::string::npos);
    test::write_file(shard, bytes.substr(0, bytes.size() - 1));
    CHECK_THROWS_WITH(inspect(o), Contains(shard.string() + ": file is"));
  }
}
