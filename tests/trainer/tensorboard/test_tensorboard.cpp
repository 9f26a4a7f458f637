// TensorBoard event files (no Torch): CRC-32C against published vectors, the
// Event encodings byte for byte, TFRecord framing, the file's name and order,
// and a writer's file read back record by record.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tensorboard/event_file.hpp"
#include "tensorboard/event_records.hpp"
#include "tensorboard/training_scalars.hpp"
#include "wireup/error.hpp"

namespace tb = wireup::train::tensorboard;
using namespace std::string_literals;

namespace {

std::string bytes(std::initializer_list<unsigned> list) {
  std::string s;
  for (unsigned b : list) s.push_back(static_cast<char>(b));
  return s;
}

std::uint64_t little_endian(const std::string& s, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

// The data of each TFRecord in `file`, checking both CRCs.
std::vector<std::string> read_records(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> records;
  std::size_t at = 0;
  while (at < all.size()) {
    REQUIRE(all.size() - at >= 16);
    const std::uint64_t length = little_endian(all, at, 8);
    CHECK(little_endian(all, at + 8, 4) == tb::masked_crc32c(all.substr(at, 8)));
    std::string data = all.substr(at + 12, length);
    CHECK(little_endian(all, at + 12 + length, 4) == tb::masked_crc32c(data));
    records.push_back(data);
    at += 16 + length;
  }
  return records;
}

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string templ = (std::filesystem::temp_directory_path() / "wireup-tb.XXXXXX").string();
    REQUIRE(mkdtemp(templ.data()) != nullptr);
    path = templ;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

}  // namespace

TEST_CASE("TFRecord's masked CRC-32C") {
  CHECK(tb::mask_crc(0) == 0xa282ead8u);
  CHECK(tb::mask_crc(0xE3069283u) == 0xc78ab0e5u);
  CHECK(tb::masked_crc32c("123456789") == 0xc78ab0e5u);
  CHECK(tb::masked_crc32c("") == 0xa282ead8u);
}

TEST_CASE("events encode as protobuf's serializer would") {
  CHECK(tb::file_version_event(0) == "\x1a\x0d"s + "brain.Event:2");
  CHECK(tb::session_start_event(0, 5) == bytes({0x10, 0x05, 0x3a, 0x02, 0x08, 0x01}));
  const std::string scalars = tb::scalars_event(1.5, 3, {{"a", 1.0}});
  CHECK(scalars == bytes({0x09, 0,    0,    0,    0,   0, 0, 0xf8, 0x3f,  // wall_time 1.5
                          0x10, 0x03,                                     // step 3
                          0x2a, 0x0a, 0x0a, 0x08,                         // summary { value {
                          0x0a, 0x01, 'a',                                //   tag "a"
                          0x15, 0,    0,    0x80, 0x3f}));                //   simple_value 1.0 } }
  // A step past 2^7 and a zero value (in a oneof: still written).
  CHECK(tb::scalars_event(0, 300, {{"z", 0.0}}) ==
        bytes({0x10, 0xac, 0x02, 0x2a, 0x0a, 0x0a, 0x08, 0x0a, 0x01, 'z', 0x15, 0, 0, 0, 0}));
}

TEST_CASE("tfrecord frames data with its length and masked CRCs") {
  const std::string record = tb::tfrecord("123456789");
  REQUIRE(record.size() == 9 + 16);
  CHECK(little_endian(record, 0, 8) == 9);
  CHECK(little_endian(record, 8, 4) == tb::masked_crc32c(record.substr(0, 8)));
  CHECK(record.substr(12, 9) == "123456789");
  CHECK(little_endian(record, 21, 4) == 0xc78ab0e5u);
  CHECK(tb::tfrecord("").size() == 16);
}

TEST_CASE("event files are named so a later run sorts after earlier ones") {
  CHECK(tb::event_file_name(1700000000, "node-1", 42) ==
        "events.out.tfevents.1700000000.node-1.42");
  CHECK(tb::new_file_seconds(100, {}) == 100);
  CHECK(tb::new_file_seconds(100, {"events.out.tfevents.90.h.1", "notes.txt"}) == 100);
  CHECK(tb::new_file_seconds(100, {"events.out.tfevents.100.h.1"}) == 101);
  CHECK(tb::new_file_seconds(100, {"events.out.tfevents.105.h.1", "events.out.tfevents.x"}) == 106);
}

TEST_CASE("a writer's file: version, START at the first step, one record per step") {
  TempDir dir;
  const auto sub = dir.path / "a" / "b";
  std::filesystem::path first_file;
  {
    tb::EventFileWriter writer(sub, 7);
    first_file = writer.path();
    writer.write_scalars(7, {{"train/loss", 2.5}, {"train/lr", 1e-3}});
    const auto records = read_records(writer.path());  // written through, no buffering
    REQUIRE(records.size() == 3);
    CHECK(records[0].substr(9) == tb::file_version_event(0));
    CHECK(records[1].substr(9) == tb::session_start_event(0, 7));
    CHECK(records[2].substr(9) ==
          tb::scalars_event(0, 7, {{"train/loss", 2.5}, {"train/lr", 1e-3}}));
  }
  tb::EventFileWriter again(sub, 5);  // a resume: a new file, named after the first
  CHECK(again.path() != first_file);
  CHECK(again.path().filename().string() > first_file.filename().string());
  CHECK(read_records(again.path()).size() == 2);
}

TEST_CASE("a directory that cannot be made is an error naming it") {
  TempDir dir;
  std::ofstream(dir.path / "file") << "x";
  CHECK_THROWS_AS(tb::EventFileWriter(dir.path / "file" / "tb", 1), wireup::InputError);
  CHECK_THROWS_WITH(tb::EventFileWriter(dir.path / "file", 1),
                    Catch::Contains((dir.path / "file").string()));
  CHECK_THROWS_WITH(tb::check_event_dir(dir.path / "file" / "tb"),
                    Catch::Contains("cannot create the directory"));
  tb::check_event_dir(dir.path / "new" / "tb");  // made, and left empty
  CHECK(std::filesystem::is_empty(dir.path / "new" / "tb"));
}

TEST_CASE("tags follow the [train] and [val] keys") {
  wireup::train::StepMetrics m;
  m.loss = 3.25;
  m.data_wait_s = 0.5;
  const auto scalars = tb::step_scalars(wireup::train::step_record(m));
  REQUIRE(scalars.size() == 8);
  CHECK(scalars[0].tag == "train/loss");
  CHECK(scalars[0].value == 3.25);
  CHECK(scalars[7].tag == "train/data_wait_s");
  CHECK(scalars[7].value == 0.5);
  CHECK(tb::validation_scalars(1.5)[0].tag == "val/loss");
  // The measured compute spread and a chat run's trained targets, in the same record.
  m.slowest_rank = 1;
  m.compute_max_s = 0.75;
  m.trained_tokens = 42;
  const auto more = tb::step_scalars(wireup::train::step_record(m));
  REQUIRE(more.size() == 13);
  CHECK(more[8].tag == "train/trained_tokens");
  CHECK(more[8].value == 42);
  CHECK(more[9].tag == "straggler/slowest_rank");
  CHECK(more[9].value == 1);
  CHECK(more[12].tag == "straggler/compute_max_s");
  CHECK(more[12].value == 0.75);
}
