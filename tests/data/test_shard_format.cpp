#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "fixtures.hpp"
#include "wireup/data/shard_file.hpp"
#include "wireup/data/shard_format.hpp"
#include "wireup/data/shard_writer.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

using namespace wireup;
using namespace wireup::data;
using Catch::Matchers::Contains;

TEST_CASE("token width follows the vocabulary size", "[format]") {
  CHECK(token_bytes_for_vocab(32000) == 2);
  CHECK(token_bytes_for_vocab(65536) == 2);
  CHECK(token_bytes_for_vocab(65537) == 4);
  CHECK(token_bytes_for_vocab(128256) == 4);
}

TEST_CASE("header encodes to fixed little-endian fields and back", "[format]") {
  const auto h = make_header(32000, 1, 2, 1000, 10);
  CHECK(h.doc_index_offset == 4096 + 2000);
  CHECK(h.file_bytes() == 4096 + 2000 + 11 * 8);
  const auto b = encode_header(h);
  CHECK(std::memcmp(b.data(), "WUTOKENS", 8) == 0);
  CHECK(b[8] == 1);                      // version
  CHECK(b[12] == 2);                     // token width
  CHECK((b[16] | b[17] << 8) == 32000);  // vocab
  CHECK(b[32] == 0xe8);                  // 1000 tokens, low byte first
  CHECK(b[33] == 0x03);
  CHECK(decode_header(b.data(), b.size(), "x") == h);
  // uint32 tokens: the index is rounded up to 8 bytes.
  const auto h4 = make_header(128256, 128000, 128001, 3, 1);
  CHECK(h4.doc_index_offset == 4096 + 16);
  CHECK(decode_header(encode_header(h4).data(), 4096, "x") == h4);
}

TEST_CASE("bad headers are rejected with the file name", "[format]") {
  const auto good = encode_header(make_header(1000, 1, 2, 50, 5));
  auto b = good;
  SECTION("short file") {
    CHECK_THROWS_WITH(decode_header(b.data(), 100, "s.bin"),
                      Contains("s.bin") && Contains("shorter than the 4096-byte header"));
  }
  SECTION("magic") {
    b[0] = 'X';
    CHECK_THROWS_WITH(decode_header(b.data(), b.size(), "s.bin"),
                      Contains("s.bin: ") && Contains("bad magic"));
  }
  SECTION("version") {
    b[8] = 9;
    CHECK_THROWS_WITH(decode_header(b.data(), b.size(), "s.bin"), Contains("format version 9"));
  }
  SECTION("width") {
    b[12] = 3;
    CHECK_THROWS_WITH(decode_header(b.data(), b.size(), "s.bin"), Contains("token width 3"));
  }
  SECTION("reserved bytes") {
    b[1000] = 1;
    CHECK_THROWS_WITH(decode_header(b.data(), b.size(), "s.bin"), Contains("reserved"));
  }
  SECTION("index offset") {
    b[56] ^= 8;
    CHECK_THROWS_WITH(decode_header(b.data(), b.size(), "s.bin"),
                      Contains("document index offset"));
  }
  SECTION("bos outside vocabulary") {
    b[20] = 0xff;
    b[21] = 0x0f;
    CHECK_THROWS_WITH(decode_header(b.data(), b.size(), "s.bin"),
                      Contains("outside the vocabulary"));
  }
}

TEST_CASE("writer and reader round-trip tokens and documents", "[format]") {
  test::TempDir dir;
  for (const std::uint32_t vocab : {300u, 70000u}) {
    const auto path = dir / ("s" + std::to_string(vocab) + ".bin");
    ShardWriter w(path, vocab, 1, 2);
    std::vector<std::vector<std::uint32_t>> docs = {{1, 5, 299, 2}, {1, 2}, {1, 7, 8, 9, 10, 2}};
    if (vocab > 65536) docs[0][2] = 69999;
    for (const auto& d : docs) w.add_document(d);
    const auto digest = w.finish();
    CHECK(digest == sha256_file(path));
    CHECK(std::filesystem::file_size(path) == w.file_bytes());
    for (const auto mode : {ReadMode::Mmap, ReadMode::Pread}) {
      const ShardFile f(path, mode);
      CHECK(f.header().token_count == 12);
      CHECK(f.header().doc_count == 3);
      CHECK(f.header().token_bytes == (vocab > 65536 ? 4u : 2u));
      CHECK(f.doc_offsets() == std::vector<std::uint64_t>{0, 4, 6, 12});
      std::vector<std::uint32_t> all(12);
      f.read_tokens(0, 12, all.data());
      std::vector<std::uint32_t> want;
      for (const auto& d : docs) want.insert(want.end(), d.begin(), d.end());
      CHECK(all == want);
      std::vector<std::uint32_t> mid(3);
      f.read_tokens(5, 3, mid.data());
      CHECK(mid == std::vector<std::uint32_t>{2, 1, 7});
    }
  }
}

TEST_CASE("writer rejects out-of-vocabulary ids and removes unfinished files", "[format]") {
  test::TempDir dir;
  const auto path = dir / "s.bin";
  {
    ShardWriter w(path, 100);
    const std::vector<std::uint32_t> doc = {1, 100};
    CHECK_THROWS_WITH(w.add_document(doc), Contains("s.bin") && Contains("outside the vocabulary"));
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("truncated and overwritten shards are caught at open", "[format]") {
  test::TempDir dir;
  const auto path = dir / "s.bin";
  ShardWriter w(path, 1000);
  w.add_document(std::vector<std::uint32_t>(500, 7));
  w.finish();
  const auto bytes = test::read_file(path);
  SECTION("truncated") {
    test::write_file(path, bytes.substr(0, bytes.size() - 100));
    CHECK_THROWS_WITH(ShardFile(path, ReadMode::Mmap),
                      Contains(path.string()) && Contains("truncated"));
  }
  SECTION("truncated into the header") {
    test::write_file(path, bytes.substr(0, 10));
    CHECK_THROWS_WITH(ShardFile(path, ReadMode::Pread),
                      Contains("shorter than the 4096-byte header"));
  }
  SECTION("grown") {
    test::write_file(path, bytes + "junk");
    CHECK_THROWS_WITH(ShardFile(path, ReadMode::Pread), Contains("but its header describes"));
  }
  SECTION("zeroed header (writer died before finish)") {
    test::write_file(path, std::string(4096, '\0') + bytes.substr(4096));
    CHECK_THROWS_WITH(ShardFile(path, ReadMode::Pread), Contains("bad magic"));
  }
  SECTION("missing") {
    std::filesystem::remove(path);
    CHECK_THROWS_AS(ShardFile(path, ReadMode::Pread), InputError);
  }
}

TEST_CASE("sha256 matches known vectors", "[format]") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(is_sha256_hex(sha256_hex("x")));
  CHECK_FALSE(is_sha256_hex("ABC"));
}

TEST_CASE("version 2 shards keep version 1's fields and add the loss mask", "[format]") {
  const auto h1 = make_header(128256, 128000, 128001, 21, 2);
  const auto h2 = make_header(128256, 128000, 128001, 21, 2, /*masked=*/true, 9);
  const auto b1 = encode_header(h1), b2 = encode_header(h2);
  CHECK(b2[8] == 2);
  // Every version 1 field sits at its offset, unchanged.
  CHECK(std::memcmp(b1.data() + 12, b2.data() + 12, 64 - 12) == 0);
  CHECK(h2.mask_offset == h2.doc_index_offset + 3 * 8);
  CHECK(h2.file_bytes() == h2.mask_offset + 3);  // 21 bits in 3 bytes
  CHECK(decode_header(b2.data(), b2.size(), "x") == h2);
  auto bad = b2;
  bad[64] ^= 8;  // mask offset moved
  CHECK_THROWS_WITH(decode_header(bad.data(), bad.size(), "s.bin"),
                    Contains("s.bin") && Contains("mask offset"));
  bad = b2;
  bad[72] = 30;  // more trained tokens than tokens
  CHECK_THROWS_WITH(decode_header(bad.data(), bad.size(), "s.bin"),
                    Contains("more trained tokens than tokens"));
  bad = b1;
  bad[64] = 1;  // version 1 keeps its reserved bytes zero
  CHECK_THROWS_WITH(decode_header(bad.data(), bad.size(), "s.bin"), Contains("reserved"));
}

TEST_CASE("a masked shard stores each token's mask bit and reads it back", "[format]") {
  test::TempDir dir;
  const std::vector<std::uint32_t> a = {1, 5, 6, 7, 9, 2}, b = {1, 8, 8, 8, 8, 8, 8, 8, 8, 8, 2};
  const std::vector<std::uint8_t> ma = {0, 0, 1, 1, 0, 1}, mb = {0, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1};
  for (const auto mode : {ReadMode::Mmap, ReadMode::Pread}) {
    ShardWriter w(dir / "m.bin", 1000, 1, 2, /*masked=*/true);
    w.add_document(a, ma);
    w.add_document(b, mb);
    CHECK_THROWS_AS(w.add_document(a), std::logic_error);  // a masked shard needs the mask
    CHECK(w.trained_count() == 11);
    w.finish();
    const ShardFile f(dir / "m.bin", mode);
    CHECK(f.header().version == 2);
    CHECK(f.header().trained_count == 11);
    CHECK(f.file_bytes() == std::filesystem::file_size(dir / "m.bin"));
    std::vector<std::uint8_t> got(17);
    f.read_mask(0, 17, got.data());
    std::vector<std::uint8_t> want = ma;
    want.insert(want.end(), mb.begin(), mb.end());
    CHECK(got == want);
    std::vector<std::uint8_t> part(5);
    f.read_mask(7, 5, part.data());  // across a byte boundary
    CHECK(part == std::vector<std::uint8_t>(want.begin() + 7, want.begin() + 12));
    CHECK(f.doc_offsets() == std::vector<std::uint64_t>{0, 6, 17});
  }
  // A version 1 shard reads as before; its mask is all trained.
  ShardWriter w(dir / "v1.bin", 1000, 1, 2);
  w.add_document(a);
  CHECK_THROWS_AS(w.add_document(b, mb), std::logic_error);
  w.finish();
  const ShardFile f(dir / "v1.bin", ReadMode::Pread);
  CHECK(f.header().version == 1);
  std::vector<std::uint8_t> got(6);
  f.read_mask(0, 6, got.data());
  CHECK(got == std::vector<std::uint8_t>(6, 1));
}
