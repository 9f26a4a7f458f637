// Checkpoint files on a real disk: chunks written and read back with their
// checksums, whole-directory verification, listing and moving aside (no Torch).
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "checkpoint/checkpoint_files.hpp"
#include "models/family_registry.hpp"
#include "models/model_config.hpp"
#include "wireup/error.hpp"

namespace fs = std::filesystem;
using namespace wireup::train;
using wireup::InputError;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/wireup-ckfiles-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// One unit of `numel` elements saved by one rank: param = i, exp_avg = 2i,
// exp_avg_sq = 3i. Returns the step directory.
fs::path save_step(const fs::path& dir, std::int64_t step, std::int64_t numel) {
  const fs::path step_dir = dir / step_dir_name(step);
  fs::create_directories(step_dir);
  CheckpointMeta m;
  m.step = step;
  m.model = preset("tiny");
  m.units.push_back({"embed", numel, {"w"}, {{numel}}});
  RankFile rf;
  rf.file = "rank-00000.bin";
  ChunkWriter out(step_dir / rf.file);
  const char* kinds[] = {"param", "exp_avg", "exp_avg_sq"};
  for (int k = 0; k < 3; ++k) {
    std::vector<float> v(static_cast<std::size_t>(numel));
    for (std::int64_t i = 0; i < numel; ++i) v[i] = static_cast<float>((k + 1) * i);
    auto [offset, sha] = out.append(v.data(), numel);
    rf.chunks.push_back({0, kinds[k], 0, numel, offset, sha});
  }
  rf.bytes = out.commit();
  m.files.push_back(rf);
  wireup::io::write_atomically(step_dir / "metadata.json", to_json(m));
  return step_dir;
}

void flip_byte(const fs::path& file, long offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c = 0;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x40));
}

}  // namespace

TEST_CASE("chunks written are read back exactly, any slice") {
  TempDir t;
  const fs::path step = save_step(t.path, 5, 1000);
  CHECK(fs::file_size(step / "rank-00000.bin") == 3 * 1000 * sizeof(float));
  CHECK_FALSE(fs::exists(step / "rank-00000.bin.tmp"));
  const auto meta = checkpoint_meta_from_json(read_text(step / "metadata.json"), "m");
  ChunkReader reader(step, meta);
  std::vector<float> out(300, -1.0f);
  reader.read(0, "exp_avg", 700, 300, out.data());
  CHECK(out[0] == 1400.0f);
  CHECK(out[299] == 1998.0f);
  std::vector<float> padded(10, -1.0f);  // 995..1004: the last 5 are padding, left alone
  reader.read(0, "exp_avg_sq", 995, 10, padded.data());
  CHECK(padded[4] == 2997.0f);
  CHECK(padded[5] == -1.0f);
  CHECK(verify_checkpoint(step).empty());
}

TEST_CASE("a flipped byte, a truncated file or a chunk past the end fail verification") {
  TempDir t;
  const fs::path step = save_step(t.path, 5, 1000);
  const fs::path bin = step / "rank-00000.bin";
  const auto meta = checkpoint_meta_from_json(read_text(step / "metadata.json"), "m");

  flip_byte(bin, 4 * 1000 + 17);  // inside exp_avg
  CHECK_THAT(verify_checkpoint(step), Catch::Contains("checksum mismatch in embed exp_avg"));
  ChunkReader reader(step, meta);
  std::vector<float> out(1000);
  CHECK_NOTHROW(reader.read(0, "param", 0, 1000, out.data()));  // other chunks still read
  CHECK_THROWS_WITH(reader.read(0, "exp_avg", 0, 10, out.data()),
                    Catch::Contains(bin.string() + ": checksum mismatch"));
  flip_byte(bin, 4 * 1000 + 17);
  CHECK(verify_checkpoint(step).empty());

  fs::resize_file(bin, 3 * 4000 - 4);
  CHECK_THAT(verify_checkpoint(step), Catch::Contains("11996 bytes, expected 12000 (truncated"));
  fs::resize_file(bin, 3 * 4000);

  CheckpointMeta past = meta;
  past.files[0].chunks[2].file_offset = 9000;  // 4000 bytes from 9000 > 12000
  ChunkReader past_reader(step, past);
  CHECK_THROWS_WITH(past_reader.verify_all(), Catch::Contains("lies past the file's end"));

  fs::remove(bin);
  CHECK_THAT(verify_checkpoint(step), Catch::Contains("rank-00000.bin: open"));
  wireup::io::write_atomically(step / "metadata.json", "{\"format\":");
  CHECK_THAT(verify_checkpoint(step), Catch::Contains("metadata.json"));
}

TEST_CASE("a whole chunk read into place is checked; verification reads a chunk in pieces") {
  TempDir t;
  const std::int64_t numel = (std::int64_t{17} << 20) / 4;  // 17 MiB: two 16 MiB pieces
  const fs::path step = save_step(t.path, 5, numel);
  const fs::path bin = step / "rank-00000.bin";
  const auto meta = checkpoint_meta_from_json(read_text(step / "metadata.json"), "m");
  std::vector<float> out(static_cast<std::size_t>(numel), -1.0f);
  ChunkReader(step, meta).read(0, "exp_avg_sq", 0, numel, out.data());
  CHECK(out[1] == 3.0f);
  CHECK(out.back() == static_cast<float>(3 * (numel - 1)));
  CHECK(verify_checkpoint(step).empty());

  const long last_piece = 4 * numel + (16L << 20) + 8;  // exp_avg's second piece
  flip_byte(bin, last_piece);
  CHECK_THAT(verify_checkpoint(step), Catch::Contains("checksum mismatch in embed exp_avg"));
  CHECK_THROWS_WITH(ChunkReader(step, meta).read(0, "exp_avg", 0, numel, out.data()),
                    Catch::Contains(bin.string() + ": checksum mismatch in embed exp_avg"));
}

TEST_CASE("listing, moving aside, durable text") {
  TempDir t;
  save_step(t.path, 60, 8);
  save_step(t.path, 200, 8);
  save_step(t.path, 50, 8);
  fs::create_directories(t.path / "step-00000070");  // a save cut short: no metadata.json
  auto list = complete_checkpoints(t.path);
  REQUIRE(list.size() == 3);
  CHECK(list[0].filename() == "step-00000200");
  CHECK(list[2].filename() == "step-00000050");

  const fs::path aside = move_aside(list[0]);
  CHECK(aside.filename() == "step-00000200.corrupt");
  CHECK(fs::exists(aside / "metadata.json"));
  save_step(t.path, 200, 8);
  CHECK(move_aside(t.path / "step-00000200").filename() == "step-00000200.corrupt-2");
  list = complete_checkpoints(t.path);
  REQUIRE(list.size() == 2);
  CHECK(list[0].filename() == "step-00000060");
  CHECK(is_step_dir_name("step-00000060"));
  CHECK_FALSE(is_step_dir_name("step-00000060.corrupt"));
  CHECK_FALSE(is_step_dir_name("step-"));

  wireup::io::write_atomically(t.path / "a.json", "hello");
  CHECK(read_text(t.path / "a.json") == "hello");
  CHECK_FALSE(fs::exists(t.path / "a.json.tmp"));
  CHECK_THROWS_WITH(read_text(t.path / "a.json", 4), Catch::Contains("5 bytes, more than the 4"));
  CHECK_THROWS_WITH(read_text(t.path / "none.json"), Catch::Contains("none.json: cannot read"));
  CHECK_THROWS_AS(read_text(t.path), InputError);  // a directory
}

TEST_CASE("Fd closes exactly once") {
  TempDir t;
  wireup::io::write_atomically(t.path / "f", "x");
  int raw = -1;
  {
    wireup::io::Fd a = wireup::io::open_file(t.path / "f", 0);
    raw = a.get();
    wireup::io::Fd b = std::move(a);
    CHECK_FALSE(a);
    CHECK(b.get() == raw);
  }
  CHECK(::fcntl(raw, F_GETFD) == -1);  // closed by b, and only by b
}
