#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace fs = std::filesystem;

namespace {
// A file of `n` pseudo-random bytes under a fresh directory; returns its bytes.
std::string write_random(const fs::path& path, std::size_t n) {
  std::mt19937 gen(static_cast<unsigned>(n));
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(gen() & 0xFFU);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(n));
  return bytes;
}
}  // namespace

TEST_CASE("sha256: the published digests") {
  CHECK(wireup::sha256_hex("") ==
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(wireup::sha256_hex("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE("sha256_file: the digest of the bytes, at every size around its read buffer") {
  // The buffer is the file's size plus one, up to 8 MiB: a file of exactly that size,
  // one byte more or less, and one read in three pieces.
  char tmpl[] = "/tmp/wireup-sha256-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const fs::path dir = tmpl;
  constexpr std::size_t kMiB8 = std::size_t{8} << 20;
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4096}, kMiB8 - 1, kMiB8,
                              kMiB8 + 1, 2 * kMiB8 + 3}) {
    CAPTURE(n);
    const fs::path p = dir / ("f" + std::to_string(n));
    const std::string bytes = write_random(p, n);
    CHECK(wireup::sha256_file(p) == wireup::sha256_hex(bytes));
  }
  // Not a regular file: read to its end all the same.
  CHECK(wireup::sha256_file("/dev/null") == wireup::sha256_hex(""));
  CHECK_THROWS_AS(wireup::sha256_file(dir / "missing"), wireup::InputError);
  CHECK_THROWS_WITH(wireup::sha256_file(dir / "missing"),
                    Catch::Matchers::Contains((dir / "missing").string()));
  fs::remove_all(dir);
}
