// Data sets from outside (copied from another team, unpacked from an
// archive): a manifest or shard that is a FIFO, a device or huge is refused
// at once, naming the file; a shard whose checksum matches but whose ids are
// past the vocabulary is refused by the loader, naming the shard and where.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "fixtures.hpp"
#include "wireup/data/loader.hpp"
#include "wireup/data/manifest.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_set.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  test::TempDir dir;
  Manifest manifest = test::write_dataset(dir.path(), {{1000, 1, 2345}, 7}, {{500}, 11});
  fs::path manifest_file = dir.path() / "manifest.json";
};

LoaderConfig config(const Fixture& f) {
  LoaderConfig c;
  c.manifest = f.dir.path();
  c.context = 64;
  c.batch_size = 2;
  c.seed = 17;
  return c;
}

using test::quick_error;

void replace_with_fifo(const fs::path& p) {
  fs::remove(p);
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
}

}  // namespace

TEST_CASE("a manifest that is a FIFO, a device or too big is refused unread", "[outside]") {
  Fixture f;
  SECTION("a FIFO") {
    replace_with_fifo(f.manifest_file);
    CHECK_THAT(quick_error([&] { TokenLoader l(config(f)); }),
               Contains(f.manifest_file.string()) && Contains("cannot read manifest"));
    CHECK_THAT(quick_error([&] { load_manifest(f.manifest_file); }),
               Contains(f.manifest_file.string()));
  }
  SECTION("a symlink to /dev/zero") {
    fs::remove(f.manifest_file);
    fs::create_symlink("/dev/zero", f.manifest_file);
    CHECK_THAT(quick_error([&] { TokenLoader l(config(f)); }), Contains(f.manifest_file.string()));
  }
  SECTION("a sparse file past the limit") {
    fs::resize_file(f.manifest_file, kMaxManifestBytes + 1);
    CHECK_THAT(quick_error([&] { load_manifest(f.dir.path()); }),
               Contains(f.manifest_file.string()) && Contains("more than the 16777216 expected"));
  }
}

TEST_CASE("a manifest too deep or of too many values is refused before the parse", "[outside]") {
  CHECK_THAT(quick_error([] { parse_manifest(std::string(1 << 20, '['), "m.json"); }),
             Contains("m.json: JSON nested deeper than 16 levels (at byte 16)"));
  std::string wide = "[";
  for (int i = 0; i < (1 << 20) + 1; ++i) wide += "{},";
  wide += "{}]";
  CHECK_THAT(quick_error([&] { parse_manifest(wide, "m.json"); }),
             Contains("m.json: more than 1048576 JSON values"));
}

TEST_CASE("a shard that is a FIFO or a device is refused, never waited on", "[outside]") {
  Fixture f;
  const auto shard = f.dir.path() / "train-1.bin";
  SECTION("a FIFO") {
    replace_with_fifo(shard);
    for (const auto mode : {ReadMode::Mmap, ReadMode::Pread})
      CHECK_THAT(quick_error([&] { ShardFile s(shard, mode); }),
                 Contains(shard.string() + ": not a regular file") && Contains("a FIFO"));
    auto c = config(f);
    c.verify = Verify::SizesOnly;
    CHECK_THAT(quick_error([&] { TokenLoader l(c); }), Contains("train-1.bin: not a regular file"));
  }
  SECTION("a device") {
    fs::remove(shard);
    fs::create_symlink("/dev/zero", shard);
    CHECK_THAT(quick_error([&] { ShardFile s(shard, ReadMode::Pread); }),
               Contains("train-1.bin: not a regular file") && Contains("a device"));
  }
}

TEST_CASE("a shard header whose counts the file does not hold is refused before allocating",
          "[outside]") {
  Fixture f;
  const auto shard = f.dir.path() / "train-2.bin";
  auto bytes = test::read_file(shard);
  // doc_count (offset 40) of 2^60: the index would be 8 EiB.
  for (int i = 0; i < 8; ++i) bytes[40 + i] = i == 7 ? char(0x10) : char(0);
  test::write_file(shard, bytes);
  CHECK_THAT(quick_error([&] { ShardFile s(shard, ReadMode::Mmap); }), Contains("train-2.bin"));
}

TEST_CASE("a shard with an id past the vocabulary and a matching checksum: the loader names it",
          "[outside]") {
  Fixture f;
  const auto shard = f.dir.path() / "train-2.bin";
  auto bytes = test::read_file(shard);
  // Token 1000 of the shard (little-endian, 2 bytes) becomes 60000 of a 50000 vocabulary.
  const std::size_t at = 4096 + 1000 * 2;
  bytes[at] = static_cast<char>(60000 & 0xFF);
  bytes[at + 1] = static_cast<char>(60000 >> 8);
  test::write_file(shard, bytes);
  f.manifest.train.shards[2].sha256 = sha256_hex(bytes);
  test::write_file(f.manifest_file, manifest_to_json(f.manifest));

  for (const auto prefetch : {0u, 2u}) {
    auto c = config(f);
    c.prefetch = prefetch;
    c.shuffle = false;
    TokenLoader loader(c);  // the checksum matches: opening succeeds
    const auto message = quick_error([&] {
      Batch b;
      while (loader.next(b)) {
      }
    });
    CHECK_THAT(message, Contains(shard.string() + ": token 1000 (document 142)") &&
                            Contains("has id 60000, not below the vocabulary size 50000") &&
                            Contains("manifest.json"));
  }
  // wireup-train eval reads windows through ShardSet::read_raw: the same error.
  for (const auto mode : {ReadMode::Mmap, ReadMode::Pread}) {
    const ShardSet set(f.dir.path(), f.manifest, f.manifest.train, "train", mode, Verify::All);
    std::vector<unsigned char> buf(set.tokens() * 2);
    CHECK_NOTHROW(set.read_raw(1001, 1000, buf.data()));  // shard 2's first 999 tokens
    CHECK_THAT(quick_error([&] { set.read_raw(1950, 100, buf.data()); }),
               Contains(shard.string() + ": token 1000 (document 142) has id 60000"));
  }
}

TEST_CASE("check_ids finds an id past the vocabulary at any place, for both widths", "[outside]") {
  for (const std::uint32_t vocab : {50000u, 100000u, 65535u}) {
    test::TempDir dir;
    const auto m = test::write_dataset(dir.path(), {{200}, 7}, {{50}, 7}, vocab);
    const ShardSet set(dir.path(), m, m.train, "train", ReadMode::Pread, Verify::SizesOnly);
    const unsigned width = m.token_bytes;
    const auto put = [&](std::vector<unsigned char>& b, std::size_t i, std::uint32_t id) {
      for (unsigned k = 0; k < width; ++k)
        b[i * width + k] = static_cast<unsigned char>(id >> 8 * k);
    };
    for (std::size_t n = 1; n <= 40; ++n) {
      std::vector<unsigned char> buf(n * width);
      for (std::size_t i = 0; i < n; ++i) put(buf, i, vocab - 1);
      CHECK_NOTHROW(set.check_ids(0, n, buf.data()));
      for (std::size_t bad = 0; bad < n; ++bad) {
        auto b = buf;
        put(b, bad, bad % 2 ? vocab : (width == 2 ? 65535 : 0xFFFFFFFFu));
        CHECK_THAT(quick_error([&] { set.check_ids(0, n, b.data()); }),
                   Contains("train-0.bin: token " + std::to_string(bad) + " (document " +
                            std::to_string(bad / 7) + ") has id"));
      }
    }
  }
}

TEST_CASE("manifest names are plain file names inside the data set", "[outside]") {
  Fixture f;
  for (const char* name : {"../train-0.bin", "/etc/passwd", "sub/train-0.bin", "..", "."}) {
    auto m = f.manifest;
    m.train.shards[0].file = name;
    test::write_file(f.manifest_file, manifest_to_json(m));
    CHECK_THAT(quick_error([&] { load_manifest(f.dir.path()); }),
               Contains("splits.train.shards[0].file") && Contains("a plain file name"));
    m = f.manifest;
    m.tokenizer.file = name;
    test::write_file(f.manifest_file, manifest_to_json(m));
    CHECK_THAT(quick_error([&] { load_manifest(f.dir.path()); }),
               Contains("tokenizer.file") && Contains("a plain file name"));
  }
}
