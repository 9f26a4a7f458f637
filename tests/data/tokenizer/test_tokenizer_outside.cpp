// Tokenizer files from outside (downloaded from a hub, unpacked from an
// archive): a FIFO, a device or a huge file is refused unread, naming it; a
// tokenizer.json whose ids run far past its entries is refused before any
// table is sized by them.
#include <sys/resource.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fixtures.hpp"
#include "wireup/error.hpp"
#include "wireup/tokenizer/byte_level.hpp"
#include "wireup/tokenizer/hf_tokenizer_json.hpp"
#include "wireup/tokenizer/tokenizer.hpp"

using namespace wireup;
using namespace wireup::tokenizer;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  ("wireup-tok-outside-" + std::to_string(::getpid()) + "-" +
                   std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

using test::quick_error;

long peak_rss_kib() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A byte-level BPE tokenizer.json: the 256 bytes as ids 0..255 and `extra`
// tokens with the given ids.
std::string tokenizer_json(const std::vector<std::pair<std::string, std::uint64_t>>& extra) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[bytes_to_unicode(std::string(1, static_cast<char>(b)))] = b;
  for (const auto& [text, id] : extra) vocab[bytes_to_unicode(text)] = id;
  const nlohmann::json j = {
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}}};
  return j.dump();
}

}  // namespace

TEST_CASE("a tokenizer that is a FIFO, a device or too big is refused unread", "[outside]") {
  TempDir t;
  const auto fifo = t.path / "tokenizer.model";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THAT(quick_error([&] { Tokenizer::load(fifo); }),
             Contains("tokenizer '" + fifo.string() + "': cannot read (not a regular file") &&
                 Contains("found a FIFO"));
  CHECK_THAT(quick_error([&] { Tokenizer::load("/dev/zero"); }),
             Contains("tokenizer '/dev/zero': cannot read (not a regular file") &&
                 Contains("found a device"));
  const auto huge = t.path / "tokenizer.json";
  { std::ofstream(huge) << "{"; }
  fs::resize_file(huge, std::uint64_t{8} << 30);  // sparse: 8 GiB of nothing
  const long before = peak_rss_kib();
  CHECK_THAT(quick_error([&] { Tokenizer::load(huge); }),
             Contains("tokenizer '" + huge.string() + "'") &&
                 Contains("8589934592 bytes, more than the 67108864 expected"));
  CHECK(peak_rss_kib() - before < 64 * 1024);
  CHECK_THAT(quick_error([&] { Tokenizer::load(t.path / "absent"); }),
             Contains("absent': cannot read") && Contains("No such file"));
}

TEST_CASE("a tokenizer.json too deep or of too many values is refused before the parse",
          "[outside]") {
  CHECK_THAT(quick_error([] { Tokenizer::from_bytes("{\"a\":" + std::string(1000, '['), "t"); }),
             Contains("t: JSON nested deeper than 32 levels"));
  std::string wide = "{\"model\": [";
  for (int i = 0; i < (8 << 20) + 1; ++i) wide += "0,";
  wide += "0]}";
  const long before = peak_rss_kib();
  CHECK_THAT(quick_error([&] { Tokenizer::from_bytes(wide, "t"); }),
             Contains("t: more than 8388608 JSON values"));
  CHECK(peak_rss_kib() - before < 64 * 1024);
}

TEST_CASE("tokenizer.json ids far past its entries are refused before a table is sized",
          "[outside]") {
  const auto small = tokenizer_json({{"ab", 256}});
  CHECK(Tokenizer::from_bytes(small, "t").vocab_size() == 257);

  // 3 KB with one id 16777215: sized by it, the tables took 1.2 GB.
  const auto big_id = tokenizer_json({{"ab", 16777215}});
  CHECK(big_id.size() < 4096);
  const long before = peak_rss_kib();
  CHECK_THAT(quick_error([&] { Tokenizer::from_bytes(big_id, "tokenizer 'tokenizer.json'"); }),
             Contains("tokenizer 'tokenizer.json': vocab entry 'ab' has id 16777215, not below "
                      "1538"));
  CHECK(peak_rss_kib() - before < 64 * 1024);
  // A reserved gap the size of the file's own entries is accepted.
  CHECK_NOTHROW(parse_hf_tokenizer_json(tokenizer_json({{"ab", 1537}}), "t"));
  CHECK_THROWS_WITH(parse_hf_tokenizer_json(tokenizer_json({{"ab", 1538}}), "t"),
                    Contains("has id 1538, not below 1538"));
}
