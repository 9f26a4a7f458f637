// .zst and .gz input of wireup-prep, on files made by the zstd and gzip commands.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "wireup/error.hpp"
#include "wireup/prep/documents.hpp"
#include "wireup/prep/input_files.hpp"
#include "wireup/prep/input_stream.hpp"
#include "wireup/prep/line_reader.hpp"
#include "wireup/prep/prep.hpp"

using namespace wireup;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

void sh(const std::string& command) {
  INFO(command);
  REQUIRE(std::system(("set -e; " + command).c_str()) == 0);
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// Every line of `file` joined with "\n" (each followed by one).
std::string read_lines(const fs::path& file) {
  prep::LineReader r(file);
  std::string line, all;
  while (r.next(line)) all += line + "\n";
  return all;
}

std::string gpl() { return test::read_file("/usr/share/common-licenses/GPL-3"); }

// A zstd skippable frame (magic 0x184D2A5?, 4-byte size, payload).
std::string skippable_frame(const std::string& payload) {
  std::string f = {'\x57', '\x2a', '\x4d', '\x18'};
  for (int i = 0; i < 4; ++i) f += static_cast<char>((payload.size() >> (8 * i)) & 0xff);
  return f + payload;
}

// Peak resident memory since the last reset_peak_rss(), in bytes; -1 when
// the kernel does not let a process reset its peak.
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return f.good();
}
long long status_kib(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  return -1;
}

}  // namespace

TEST_CASE("compression comes from the magic bytes", "[zstd]") {
  const unsigned char zst[] = {0x28, 0xb5, 0x2f, 0xfd}, skip[] = {0x5f, 0x2a, 0x4d, 0x18},
                      gz[] = {0x1f, 0x8b}, text[] = {'t', 'e', 'x', 't'};
  CHECK(prep::compression_from_magic(zst, 4) == prep::Compression::Zstd);
  CHECK(prep::compression_from_magic(skip, 4) == prep::Compression::Zstd);
  CHECK(prep::compression_from_magic(zst, 3) == prep::Compression::None);
  CHECK(prep::compression_from_magic(gz, 2) == prep::Compression::Gzip);
  CHECK(prep::compression_from_magic(text, 4) == prep::Compression::None);
  CHECK(prep::compression_from_magic(text, 0) == prep::Compression::None);
}

TEST_CASE("a .zst file reads as its text: one frame, many frames, skippable frames", "[zstd]") {
  test::TempDir dir;
  const std::string text = gpl();
  test::write_file(dir / "gpl.txt", text);
  sh("zstd -q " + q(dir / "gpl.txt") + " -o " + q(dir / "gpl.txt.zst"));
  CHECK(read_lines(dir / "gpl.txt.zst") == text);

  // Three frames back to back (zstd -d reads them as one stream), with a
  // skippable frame between, and the same bytes under a name without .zst.
  const auto third = text.size() / 3;
  for (int i = 0; i < 3; ++i)
    test::write_file(dir / ("part" + std::to_string(i)),
                     text.substr(i * third, i == 2 ? std::string::npos : third));
  sh("cd " + q(dir.path()) + " && zstd -q -19 part0 -o p0.zst && zstd -q -1 part1 -o p1.zst" +
     " && zstd -q --no-check part2 -o p2.zst");
  test::write_file(dir / "multi.zst", test::read_file(dir / "p0.zst") + skippable_frame("wireup") +
                                          test::read_file(dir / "p1.zst") +
                                          test::read_file(dir / "p2.zst"));
  CHECK(read_lines(dir / "multi.zst") == text);
  fs::copy_file(dir / "multi.zst", dir / "multi.data");
  CHECK(read_lines(dir / "multi.data") == text);
  sh("cd " + q(dir.path()) + " && zstd -dq multi.zst -o multi.out && cmp multi.out gpl.txt");

  // pzstd (in the zstd package) writes a frame, each behind a skippable
  // frame, per 4 MiB or so of input.
  std::string many;
  while (many.size() < (std::size_t{20} << 20)) many += text;
  test::write_file(dir / "many.txt", many);
  sh("cd " + q(dir.path()) + " && pzstd -q -p 2 many.txt -o many.txt.zst");
  const auto packed = test::read_file(dir / "many.txt.zst");
  std::size_t frames = 0;
  for (auto at = packed.find("\x28\xb5\x2f\xfd"); at != std::string::npos;
       at = packed.find("\x28\xb5\x2f\xfd", at + 1))
    ++frames;
  CHECK(frames >= 3);
  CHECK(read_lines(dir / "many.txt.zst") == many);
}

TEST_CASE("empty .zst content has no lines; an empty or mislabelled .zst or .gz is an error",
          "[zstd]") {
  test::TempDir dir;
  sh("zstd -q -c </dev/null >" + q(dir / "nothing.txt.zst"));
  CHECK(read_lines(dir / "nothing.txt.zst").empty());
  test::write_file(dir / "zero.txt", "");
  CHECK(read_lines(dir / "zero.txt").empty());
  for (const char* name : {"zero.zst", "zero.jsonl.gz"}) {
    test::write_file(dir / name, "");
    CHECK_THROWS_WITH(read_lines(dir / name), Contains(name) && Contains("the file is empty"));
  }
  test::write_file(dir / "plain.zst", "just text\n");
  CHECK_THROWS_WITH(read_lines(dir / "plain.zst"),
                    Contains("plain.zst: named .zst but does not start like zstd") &&
                        Contains("first bytes: 6a 75 73 74"));
  test::write_file(dir / "plain.gz", "just text\n");
  CHECK_THROWS_WITH(read_lines(dir / "plain.gz"), Contains("plain.gz: named .gz"));
}

namespace {

// Compresses a 400-line text with `compress` (a shell command reading IN and writing OUT)
// into DIR/t.EXT, checks it reads back whole, then cuts it at every byte: each cut must be
// an error naming the file, never short data. Returns the compressed bytes.
std::string check_every_truncation(const fs::path& dir, const std::string& compress,
                                   const std::string& ext) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "line " + std::to_string(i * 7919 % 1000) + " of text\n";
  test::write_file(dir / "t.txt", text);
  const fs::path whole = dir / ("t." + ext), cut = dir / ("cut." + ext);
  sh("IN=" + q(dir / "t.txt") + " OUT=" + q(whole) + "; " + compress);
  const std::string bytes = test::read_file(whole);
  REQUIRE(bytes.size() > 100);
  CHECK(read_lines(whole) == text);
  for (std::size_t n = 1; n < bytes.size(); ++n) {
    test::write_file(cut, bytes.substr(0, n));
    INFO("the first " << n << " of " << bytes.size() << " bytes");
    CHECK_THROWS_WITH(read_lines(cut), Contains(cut.filename().string()));
  }
  return bytes;
}

}  // namespace

TEST_CASE("every truncation of a .zst file is an error naming the file, never short data",
          "[zstd]") {
  test::TempDir dir;
  const std::string bytes =
      check_every_truncation(dir.path(), "zstd -q \"$IN\" -o \"$OUT\"", "zst");
  test::write_file(dir / "cut.zst", bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_WITH(
      read_lines(dir / "cut.zst"),
      Contains("cut.zst: zstd data error") &&
          Contains("the file ends inside the frame that starts at compressed byte 0") &&
          Contains("truncated download?"));
}

// zlib reports a truncated stream on the read that returns the last good bytes; zlib 1.3.2
// clears that error before the next read, so a reader that looked only at the end took a
// truncated .gz for a whole one. Here most cuts leave the whole text in one read.
TEST_CASE("every truncation of a .gz file is an error naming the file, never short data",
          "[gzip]") {
  test::TempDir dir;
  const std::string bytes = check_every_truncation(dir.path(), "gzip -c \"$IN\" >\"$OUT\"", "gz");
  test::write_file(dir / "cut.gz", bytes.substr(0, bytes.size() - 4));  // no length field
  CHECK_THROWS_WITH(read_lines(dir / "cut.gz"),
                    Contains("cut.gz: gzip data error") && Contains("truncated download?"));
}

TEST_CASE("a corrupt .zst file is an error naming the file, or reads exactly right", "[zstd]") {
  test::TempDir dir;
  const std::string text = gpl();
  test::write_file(dir / "gpl.txt", text);
  sh("zstd -q " + q(dir / "gpl.txt") + " -o " + q(dir / "gpl.zst"));
  const std::string bytes = test::read_file(dir / "gpl.zst");
  int errors = 0;
  for (std::size_t at = 4; at < bytes.size(); at += 97) {
    std::string bad = bytes;
    bad[at] = static_cast<char>(bad[at] ^ 0x5a);
    test::write_file(dir / "bad.zst", bad);
    INFO("byte " << at << " changed");
    try {
      const auto got = read_lines(dir / "bad.zst");
      CHECK(got == text);
    } catch (const InputError& e) {
      CHECK_THAT(e.what(), Contains("bad.zst: zstd data error"));
      ++errors;
    }
  }
  CHECK(errors > 0);
  // Data after the last frame that is not a frame.
  test::write_file(dir / "trailing.zst", bytes + "not zstd");
  CHECK_THROWS_WITH(
      read_lines(dir / "trailing.zst"),
      Contains("trailing.zst: zstd data error at uncompressed byte " +
               std::to_string(text.size())) &&
          Contains("frame that starts at compressed byte " + std::to_string(bytes.size())));
}

TEST_CASE("a .zst frame that asks for a window over 128 MiB is refused before any allocation",
          "[zstd]") {
  test::TempDir dir;
  // From a pipe the frame declares --long=31's 2 GiB window whatever the content.
  sh("echo hello | zstd -q --long=31 -c >" + q(dir / "long.zst"));
  CHECK_THROWS_WITH(read_lines(dir / "long.zst"),
                    Contains("long.zst: zstd data error") &&
                        Contains("needs a window larger than 128 MiB") &&
                        Contains("zstd -d --memory=2048MB"));
  sh("echo hello | zstd -q --long=27 -c >" + q(dir / "ok.zst"));
  CHECK(read_lines(dir / "ok.zst") == "hello\n");
}

TEST_CASE("a big .zst file streams in bounded memory", "[zstd]") {
  test::TempDir dir;
  // 256 MiB of lines, compressed from a pipe (no declared content size).
  sh("yes 'a line of a big compressed corpus, streamed rather than held' | head -c 268435456 | "
     "zstd -q -c >" +
     q(dir / "big.txt.zst"));
  const bool peak = reset_peak_rss();
  const long long rss_before = status_kib("VmRSS");
  prep::LineReader r(dir / "big.txt.zst");
  std::string line;
  std::uint64_t lines = 0, bytes = 0;
  while (r.next(line)) {
    ++lines;
    bytes += line.size() + 1;
  }
  // 61-byte lines; the last is cut short, without its "\n".
  CHECK(bytes == (std::uint64_t{1} << 28) + 1);
  CHECK(lines == (std::uint64_t{1} << 28) / 61 + 1);
  CHECK(r.raw_offset() == fs::file_size(dir / "big.txt.zst"));
  if (peak) {
    const long long grew_kib = status_kib("VmHWM") - rss_before;
    std::cout << "a 256 MiB .zst file read: peak RSS grew by " << grew_kib << " KiB\n";
    CHECK(grew_kib < 32 * 1024);
  } else {
    WARN("/proc/self/clear_refs cannot reset the peak RSS here: memory not checked");
  }
}

TEST_CASE("wireup-prep on .zst input writes what it writes from the plain text", "[zstd]") {
  test::TempDir dir;
  fs::create_directories(dir / "plain");
  fs::create_directories(dir / "zst");
  std::string jsonl;
  for (const char* name : {"GPL-3", "Apache-2.0"}) {
    const auto text = test::read_file(fs::path("/usr/share/common-licenses") / name);
    test::write_file(dir / "plain" / (std::string(name) + ".txt"), text);
    // A text file's document is its lines joined by "\n": no final newline.
    jsonl += nlohmann::json({{"text", text.substr(0, text.size() - 1)}}).dump() + "\n";
  }
  sh("cd " + q(dir / "plain") + " && zstd -q GPL-3.txt -o ../zst/GPL-3.txt.zst && " +
     "zstd -q -c Apache-2.0.txt >../zst/Apache-2.0.txt.zst");
  prep::PrepOptions o;
  o.inputs = {(dir / "plain").string()};
  o.output = dir / "out-plain";
  o.vocab_size = 400;
  o.validation_fraction = 0;
  o.threads = 2;
  o.progress = false;
  const auto plain = prep::run_prep(o);
  o.inputs = {(dir / "zst").string()};
  o.output = dir / "out-zst";
  const auto zst = prep::run_prep(o);
  CHECK(zst.train.documents() == 2);
  CHECK(zst.train == plain.train);
  CHECK(zst.tokenizer.sha256 == plain.tokenizer.sha256);
  REQUIRE(zst.inputs.size() == 2);
  CHECK(zst.inputs[0].bytes == fs::file_size(dir / "zst" / "Apache-2.0.txt.zst"));

  // JSONL inside zstd, found by --format auto from the name (.jsonl.zst,
  // .NDJSON.ZST): the same documents, so the same shards.
  test::write_file(dir / "docs.jsonl", jsonl);
  sh("cd " + q(dir.path()) + " && zstd -q docs.jsonl -o docs.jsonl.zst && " +
     "cp docs.jsonl.zst DOCS.NDJSON.ZST");
  const auto listed =
      prep::list_inputs({(dir / "docs.jsonl.zst").string(), (dir / "DOCS.NDJSON.ZST").string(),
                         (dir / "plain" / "GPL-3.txt").string()},
                        prep::InputFormat::Auto);
  REQUIRE(listed.size() == 3);
  CHECK(listed[0].jsonl);
  CHECK(listed[1].jsonl);
  CHECK_FALSE(listed[2].jsonl);
  o.inputs = {(dir / "docs.jsonl.zst").string()};
  o.output = dir / "out-jsonl";
  o.vocab_size = 0;
  o.tokenizer = dir / "out-plain" / "tokenizer.model";
  const auto from_jsonl = prep::run_prep(o);
  // Input order differs (GPL first here): compare the token totals and the
  // first shard's documents against a plain run in the same order.
  o.inputs = {(dir / "plain" / "GPL-3.txt").string(), (dir / "plain" / "Apache-2.0.txt").string()};
  o.output = dir / "out-ordered";
  const auto ordered = prep::run_prep(o);
  CHECK(from_jsonl.train == ordered.train);
}

TEST_CASE("a truncated .zst input fails the run and leaves no output", "[zstd]") {
  test::TempDir dir;
  test::write_file(dir / "gpl.txt", gpl());
  sh("zstd -q " + q(dir / "gpl.txt") + " -o " + q(dir / "gpl.txt.zst"));
  const auto bytes = test::read_file(dir / "gpl.txt.zst");
  test::write_file(dir / "gpl.txt.zst", bytes.substr(0, bytes.size() - 3));
  prep::PrepOptions o;
  o.inputs = {(dir / "gpl.txt").string(), (dir / "gpl.txt.zst").string()};
  o.output = dir / "out";
  o.vocab_size = 300;
  o.validation_fraction = 0;
  o.progress = false;
  CHECK_THROWS_WITH(prep::run_prep(o),
                    Contains("gpl.txt.zst: zstd data error") && Contains("truncated download?"));
  CHECK_FALSE(fs::exists(dir / "out"));
}
