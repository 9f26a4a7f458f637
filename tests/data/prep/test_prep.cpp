#include <zlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "fixtures.hpp"
#include "prep_fixtures.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/error.hpp"
#include "wireup/prep/documents.hpp"
#include "wireup/prep/prep.hpp"
#include "wireup/tokenizer/text_pieces.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

// Real English that every Debian system has (base-files is Essential).
const std::vector<std::string> kLicenses = {"GPL-3", "Apache-2.0", "LGPL-2.1", "MPL-2.0",
                                            "Artistic"};

fs::path corpus(const test::TempDir& dir) {
  auto in = dir / "corpus";
  fs::create_directories(in);
  for (const auto& name : kLicenses)
    fs::copy_file(fs::path("/usr/share/common-licenses") / name, in / name);
  return in;
}

prep::PrepOptions options(const fs::path& in, const fs::path& out) {
  prep::PrepOptions o;
  o.inputs = {in.string()};
  o.output = out;
  o.vocab_size = 400;
  o.docs.text_docs = prep::TextDocs::Paragraph;
  o.validation_fraction = 0.05;
  o.threads = 2;
  o.progress = false;
  return o;
}

// What a failed run must leave: not even the output directory it created.
void check_nothing_left(const fs::path& out) {
  if (!fs::exists(out)) return;
  for (const auto& e : fs::directory_iterator(out)) FAIL("left behind: " << e.path());
  FAIL("left behind: the empty output directory " << out);
}

void write_gz(const fs::path& p, const std::string& text) {
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f != nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

}  // namespace

TEST_CASE("trained SentencePiece model round-trips text, shards included", "[prep]") {
  test::TempDir dir;
  const auto in = corpus(dir);
  const auto m = prep::run_prep(options(in, dir / "out"));
  const auto tok = tokenizer::Tokenizer::load(dir / "out" / "tokenizer.model");
  CHECK(tok.vocab_size() == 400);
  CHECK(tok.bos_id() == 1);
  CHECK(tok.eos_id() == 2);
  std::vector<int> ids;
  for (const std::string text :
       {"Hello,  world!\n\tIndented line  with double  spaces.", " leading space",
        "Unicode: naïve café, 日本語, emoji 🙂, digits 12345", "trailing spaces   "}) {
    tok.encode(text, ids);
    CHECK(tok.decode(ids) == text);
  }
  // Every document of the corpus, read back out of the shards, decodes to its text.
  std::vector<std::string> docs;
  for (const auto& name : kLicenses)
    for (auto& p : test::paragraphs(in / name)) docs.push_back(std::move(p));
  std::multiset<std::string> want(docs.begin(), docs.end()), got;
  for (const auto* split : {&m.train, &m.validation}) {
    for (const auto& e : split->shards) {
      const data::ShardFile f(dir / "out" / e.file, data::ReadMode::Pread);
      const auto offsets = f.doc_offsets();
      for (std::size_t d = 0; d + 1 < offsets.size(); ++d) {
        std::vector<std::uint32_t> t(offsets[d + 1] - offsets[d]);
        f.read_tokens(offsets[d], t.size(), t.data());
        REQUIRE(t.size() >= 2);
        CHECK(t.front() == 1);
        CHECK(t.back() == 2);
        got.insert(tok.decode(std::vector<int>(t.begin() + 1, t.end() - 1)));
      }
    }
  }
  CHECK(got == want);
  CHECK(m.train.documents() + m.validation.documents() == docs.size());
  CHECK(m.validation.documents() > 0);
}

TEST_CASE("re-running gives byte-identical output, whatever the thread count", "[prep]") {
  test::TempDir dir;
  const auto in = corpus(dir);
  auto o = options(in, dir / "a");
  o.shard_tokens = 5000;  // several shards
  o.threads = 1;
  const auto ma = prep::run_prep(o);
  o.output = dir / "b";
  o.threads = 2;
  const auto mb = prep::run_prep(o);
  CHECK(ma == mb);
  CHECK(ma.train.shards.size() > 3);
  for (const auto& e : fs::directory_iterator(dir / "a")) {
    CAPTURE(e.path());
    CHECK(test::read_file(e.path()) == test::read_file(dir / "b" / e.path().filename()));
  }
  CHECK(fs::exists(dir / "a" / "manifest.json"));
  // Documents never straddle shards, and shards stay near the limit.
  for (const auto& s : ma.train.shards) CHECK(s.tokens <= 5000 + 2000);
  prep::verify_dataset(dir / "a");
}

TEST_CASE("JSONL, gzip and an existing tokenizer give the same tokens as text", "[prep]") {
  test::TempDir dir;
  const auto in = corpus(dir);
  auto o = options(in, dir / "text");
  o.validation_fraction = 0;
  o.inputs = {(in / "GPL-3").string()};
  const auto from_text = prep::run_prep(o);

  const auto jdir = dir / "jsonl";
  fs::create_directories(jdir);
  std::string jsonl;
  for (const auto& p : test::paragraphs(in / "GPL-3"))
    jsonl +=
        nlohmann::json({{"id", 1}, {"content", p}}).dump() + "\n\n";  // blank lines are skipped
  write_gz(jdir / "gpl.jsonl.gz", jsonl);
  o.inputs = {jdir.string()};
  o.output = dir / "from-jsonl";
  o.docs.jsonl_field = "content";
  o.vocab_size = 0;
  o.tokenizer = dir / "text" / "tokenizer.model";
  const auto from_jsonl = prep::run_prep(o);
  CHECK(from_jsonl.train.tokens() == from_text.train.tokens());
  CHECK(from_jsonl.train.documents() == from_text.train.documents());
  CHECK(from_jsonl.tokenizer.sha256 == from_text.tokenizer.sha256);
  CHECK(from_jsonl.tokenizer.source == o.tokenizer->string());
  CHECK(test::read_file(dir / "from-jsonl" / "train-00000.bin") ==
        test::read_file(dir / "text" / "train-00000.bin"));
  REQUIRE(from_jsonl.inputs.size() == 1);
  CHECK(from_jsonl.inputs[0].path == (jdir / "gpl.jsonl.gz").string());

  // And the loader reads what prep wrote.
  data::LoaderConfig c;
  c.manifest = dir / "from-jsonl";
  c.context = 128;
  c.batch_size = 4;
  data::TokenLoader loader(c);
  data::Batch b;
  REQUIRE(loader.next(b));
  for (std::uint64_t i = 0; i < b.rows; ++i)
    for (std::uint64_t j = 0; j < b.cols; ++j) CHECK(b.token(i, j) < 400);
}

TEST_CASE("text document modes", "[prep]") {
  test::TempDir dir;
  const auto f = dir / "t.txt";
  test::write_file(f, "one\ntwo\n\n  \nthree\n%\nfour\r\n%\n%\n");
  const auto read = [&](const prep::DocOptions& o) {
    std::vector<std::string> out;
    prep::DocumentReader r({f, 0, false}, o);
    prep::Document d;
    while (r.next(d)) out.push_back(d.text);
    return out;
  };
  prep::DocOptions o;
  CHECK(read(o) == std::vector<std::string>{"one\ntwo\n\n  \nthree\n%\nfour\n%\n%"});
  o.text_docs = prep::TextDocs::Paragraph;
  CHECK(read(o) == std::vector<std::string>{"one\ntwo", "three\n%\nfour\n%\n%"});
  o.text_docs = prep::TextDocs::Line;
  CHECK(read(o) == std::vector<std::string>{"one", "two", "three", "%", "four", "%", "%"});
  o.separator = "%";
  CHECK(read(o) == std::vector<std::string>{"one\ntwo\n\n  \nthree", "four"});
}

TEST_CASE("validation split picks the requested fraction", "[prep]") {
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < 100000; ++i) n += prep::is_validation(5, i, 0.01);
  CHECK((n > 850 && n < 1150));
  CHECK_FALSE(prep::is_validation(5, 3, 0.0));
}

TEST_CASE("bad input fails with file and line and leaves nothing behind", "[prep]") {
  test::TempDir dir;
  const auto in = corpus(dir);
  const auto out = dir / "out";
  auto o = options(in, out);
  SECTION("missing input") {
    o.inputs = {(dir / "nope.txt").string()};
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("nope.txt") && Contains("no such file"));
  }
  SECTION("bad JSON line") {
    test::write_file(dir / "c.jsonl",
                     "{\"text\": \"fine\"}\n{\"text\": \"also fine\"}\n{\"text\": oops}\n");
    o.inputs = {(dir / "c.jsonl").string()};
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("c.jsonl:3: bad JSON line"));
  }
  SECTION("JSON line with a number past double's range") {
    test::write_file(dir / "c.jsonl", "{\"text\": \"fine\", \"n\": 1e999999}\n");
    o.inputs = {(dir / "c.jsonl").string()};
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("c.jsonl:1: bad JSON line"));
  }
  SECTION("JSONL without the field") {
    test::write_file(dir / "c.jsonl", "{\"text\": \"fine\"}\n{\"body\": \"x\"}\n");
    o.inputs = {(dir / "c.jsonl").string()};
    CHECK_THROWS_WITH(prep::run_prep(o),
                      Contains("c.jsonl:2: expected a JSON object with a string field 'text'"));
  }
  SECTION("invalid UTF-8") {
    test::write_file(dir / "latin1.txt", "caf\xe9 au lait\nline two\n");
    o.inputs = {(dir / "latin1.txt").string()};
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("latin1.txt:1: not valid UTF-8 (byte 4"));
  }
  SECTION("truncated gzip") {
    write_gz(dir / "t.txt.gz", std::string(100000, 'a'));
    const auto bytes = test::read_file(dir / "t.txt.gz");
    test::write_file(dir / "t.txt.gz", bytes.substr(0, bytes.size() - 10));
    o.inputs = {(dir / "t.txt.gz").string()};
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("t.txt.gz") && Contains("gzip"));
  }
  SECTION("unreadable tokenizer") {
    test::write_file(dir / "tokenizer.model", "this is not a protobuf");
    o.vocab_size = 0;
    o.tokenizer = dir / "tokenizer.model";
    CHECK_THROWS_WITH(prep::run_prep(o),
                      Contains("tokenizer.model") && Contains("not a tokenizer wireup-prep reads"));
    o.tokenizer = dir / "missing.model";
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("missing.model") && Contains("cannot read"));
  }
  SECTION("empty corpus") {
    fs::create_directories(dir / "empty");
    test::write_file(dir / "empty" / "a.txt", "\n   \n\n");
    test::write_file(dir / "empty" / "b.jsonl", "\n{\"text\": \"  \"}\n");
    o.inputs = {(dir / "empty").string()};
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("empty corpus"));
    o.vocab_size = 0;
    o.tokenizer = "/nonexistent";  // the corpus check does not depend on training
    CHECK_THROWS_AS(prep::run_prep(o), InputError);
  }
  SECTION("validation split too small") {
    o.inputs = {(in / "Artistic").string()};
    o.validation_fraction = 0.0001;
    CHECK_THROWS_WITH(prep::run_prep(o), Contains("validation split is empty"));
  }
  SECTION("vocabulary too small for byte fallback") {
    o.vocab_size = 100;
    CHECK_THROWS_WITH(prep::run_prep(o),
                      Contains("--vocab-size 100: SentencePiece training failed"));
  }
  check_nothing_left(out);
}

TEST_CASE("an existing data set is kept unless --force", "[prep]") {
  test::TempDir dir;
  const auto in = corpus(dir);
  auto o = options(in, dir / "out");
  o.shard_tokens = 20000;
  const auto first = prep::run_prep(o);
  const auto before = test::read_file(dir / "out" / "manifest.json");
  CHECK_THROWS_WITH(prep::run_prep(o), Contains("already holds a prepared data set"));
  CHECK(test::read_file(dir / "out" / "manifest.json") == before);
  o.force = true;
  o.shard_tokens = 1u << 30;  // fewer shards: the old extra ones must go
  const auto second = prep::run_prep(o);
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(dir / "out"))
    files.insert(e.path().filename().string());
  CHECK(files == std::set<std::string>{"manifest.json", "tokenizer.model", "train-00000.bin",
                                       "validation-00000.bin"});
  prep::verify_dataset(dir / "out");
}

TEST_CASE("verify catches a corrupted shard", "[prep]") {
  test::TempDir dir;
  const auto in = corpus(dir);
  prep::run_prep(options(in, dir / "out"));
  auto bytes = test::read_file(dir / "out" / "train-00000.bin");
  bytes[4200] ^= 1;
  test::write_file(dir / "out" / "train-00000.bin", bytes);
  CHECK_THROWS_WITH(prep::verify_dataset(dir / "out"), Contains("train-00000.bin: SHA-256"));
}

TEST_CASE("long documents are cut before a word, or at a character boundary", "[prep]") {
  bool at_word = false;
  CHECK(tokenizer::piece_end("short text", 0, 100, at_word) == 10);
  CHECK(at_word);
  // "one two  three": the last run start within the second half of 10 bytes.
  const std::string s = "one two  three four";
  CHECK(tokenizer::piece_end(s, 0, 10, at_word) == 7);  // before "  three"
  CHECK(at_word);
  CHECK(tokenizer::piece_end(s, 7, 10, at_word) == 14);  // before " four"
  CHECK(at_word);
  // No space: cut at the limit, backed off to a UTF-8 character start.
  const std::string cjk = "\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87";  // 4 x 3 bytes
  CHECK(tokenizer::piece_end(cjk, 0, 7, at_word) == 6);
  CHECK_FALSE(at_word);
  CHECK(tokenizer::piece_end(cjk, 6, 4, at_word) == 9);
}

TEST_CASE("a document encoded in pieces gives the ids of encoding it whole", "[prep]") {
  // wireup-prep's training settings (identity normalisation, a dummy prefix,
  // whitespace-only pieces); text with runs of spaces, tabs, newlines,
  // digits and non-ASCII letters; pieces of a few hundred to a few thousand
  // bytes. BPE (Llama's model type): the same ids. Unigram: the same text;
  // where two segmentations of a whitespace run score exactly alike, float
  // rounding of the path sums may pick the other one.
  std::vector<std::string> sentences;
  for (const auto& name : kLicenses)
    for (const auto& p : test::paragraphs(fs::path("/usr/share/common-licenses") / name))
      sentences.push_back(p);
  std::string text;
  for (std::size_t i = 0; i < 60; ++i) {
    text += sentences[i * 7 % sentences.size()];
    text += i % 3 == 0 ? "   " : i % 3 == 1 ? "\n\n  \t" : " ";
    text += "caf\xc3\xa9 na\xc3\xafve 12345  x";
  }
  for (const char* type : {"bpe", "unigram"}) {
    CAPTURE(type);
    const auto tok = tokenizer::Tokenizer::from_bytes(
        tokenizer::train_sentencepiece(sentences, {400, type}), std::string("trained ") + type);
    std::vector<int> whole;
    tok.encode(text, whole);
    for (const std::size_t piece : {300, 1000, 4096}) {
      CAPTURE(piece);
      std::vector<int> ids;
      std::size_t pieces = 0;
      const auto rough = tok.encode_pieces(
          text, piece,
          [&](const std::vector<int>& p) { ids.insert(ids.end(), p.begin(), p.end()); },
          [&] { ++pieces; });
      CHECK(rough == 0);
      CHECK(pieces >= text.size() / piece);
      if (std::string(type) == "bpe") CHECK(ids == whole);
      CHECK(tok.decode(ids) == text);
    }
  }
  // No spaces at all: cut anyway (memory stays bounded), counted, no text lost.
  const auto tok = tokenizer::Tokenizer::from_bytes(
      tokenizer::train_sentencepiece(sentences, {400, "bpe"}), "trained");
  const std::string solid(5000, 'x');
  std::vector<int> ids;
  const auto rough = tok.encode_pieces(
      solid, 1000, [&](const std::vector<int>& p) { ids.insert(ids.end(), p.begin(), p.end()); },
      [] {});
  CHECK(rough == 4);
  CHECK(tok.decode(ids) == solid);
}

TEST_CASE("a document longer than --max-doc-bytes is an error naming it", "[prep]") {
  test::TempDir dir;
  const auto in = dir / "in.txt";
  test::write_file(in, "first document\n\n" + std::string(3000, 'w') + "\n\nlast\n");
  auto o = options(in, dir / "out");
  o.docs.max_doc_bytes = 1000;
  CHECK_THROWS_WITH(prep::run_prep(o), Contains("in.txt:3: a line longer than 1000 bytes") &&
                                           Contains("--max-doc-bytes"));
  check_nothing_left(dir / "out");
  test::write_file(in, "first document\n\n" + std::string(600, 'w') + "\n" + std::string(600, 'v') +
                           "\n\nlast\n");
  CHECK_THROWS_WITH(prep::run_prep(o), Contains("in.txt:3: a document longer than 1000 bytes"));
  check_nothing_left(dir / "out");
}
