#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace fs = std::filesystem;
using namespace wireup;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "wireup-file-io.XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("write_atomically replaces a file whole and leaves no temporary behind") {
  TempDir t;
  const auto f = t.path / "meta.json";
  io::write_atomically(f, "first");
  io::write_atomically(f, "second, longer");
  CHECK(slurp(f) == "second, longer");
  CHECK_FALSE(fs::exists(t.path / "meta.json.tmp"));
  // A directory that does not exist: an error naming the file, nothing left.
  const auto missing = t.path / "no-such-dir" / "x.json";
  CHECK_THAT(error_of([&] { io::write_atomically(missing, "x"); }),
             Catch::Contains(missing.string() + ".tmp: open"));
}

TEST_CASE("read_text reads regular files only, never blocks on a FIFO, and bounds the size") {
  TempDir t;
  io::write_atomically(t.path / "small", "hello");
  CHECK(io::read_text(t.path / "small", 5) == "hello");
  CHECK_THAT(error_of([&] { io::read_text(t.path / "small", 4); }),
             Catch::Contains("small: 5 bytes, more than the 4 expected"));
  CHECK_THAT(error_of([&] { io::read_text(t.path, 100); }),
             Catch::Contains("not a regular file") && Catch::Contains("a directory"));
  const auto fifo = t.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THAT(error_of([&] { io::read_text(fifo, 100); }),
             Catch::Contains(fifo.string() + ": not a regular file") && Catch::Contains("FIFO"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));  // not waited on
  CHECK_THAT(error_of([&] { io::read_text("/dev/zero", 100); }), Catch::Contains("a device"));
  CHECK_THAT(error_of([&] { io::read_text(t.path / "absent", 100); }),
             Catch::Contains("absent: open: No such file"));
}

TEST_CASE("open_regular returns a regular file's descriptor and size, refusing the rest unread") {
  TempDir t;
  io::write_atomically(t.path / "data", "0123456789");
  const auto f = io::open_regular(t.path / "data", 10);
  CHECK(f.size == 10);
  char buf[4];
  io::pread_all(f.fd.get(), buf, 4, 6, t.path / "data");
  CHECK(std::string(buf, 4) == "6789");
  CHECK_THAT(error_of([&] { io::open_regular(t.path / "data", 9); }),
             Catch::Contains("data: 10 bytes, more than the 9 expected"));
  // A huge sparse file is refused from its size alone.
  const auto big = t.path / "big";
  { std::ofstream(big) << "x"; }
  fs::resize_file(big, std::uint64_t{1} << 40);
  CHECK_THAT(error_of([&] { io::open_regular(big, 1 << 20); }),
             Catch::Contains("big: 1099511627776 bytes, more than the 1048576 expected"));
  const auto fifo = t.path / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THAT(error_of([&] { io::open_regular(fifo, UINT64_MAX); }),
             Catch::Contains(fifo.string() + ": not a regular file") && Catch::Contains("FIFO"));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));  // not waited on
  CHECK_THAT(error_of([&] { io::open_regular("/dev/zero", UINT64_MAX); }),
             Catch::Contains("a device"));
}

TEST_CASE("check_json_shape bounds nesting and the number of values before a parse") {
  const fs::path p = "/d/x.json";
  CHECK_NOTHROW(io::check_json_shape(R"({"a": [1, 2, {"b": "[[[,,,"}]})", p, 3, 6));
  CHECK_THAT(error_of([&] { io::check_json_shape(R"({"a": [1, 2, {"b": 3}]})", p, 2, 100); }),
             Catch::Contains("/d/x.json: JSON nested deeper than 2 levels (at byte 13)"));
  CHECK_THAT(error_of([&] { io::check_json_shape("[1,2,3,4]", p, 8, 4); }),
             Catch::Contains("/d/x.json: more than 4 JSON values (at byte 6)"));
  // Escaped quotes do not end a string; brackets inside strings do not count.
  CHECK_NOTHROW(io::check_json_shape(R"(["\"[[[[", "\\"])", p, 1, 3));
  CHECK_THAT(error_of([&] { io::check_json_shape(std::string(100000, '['), p, 64, 1 << 20); }),
             Catch::Contains("nested deeper than 64 levels (at byte 64)"));
}

TEST_CASE("pread_all names a truncated file and where it ends") {
  TempDir t;
  io::write_atomically(t.path / "short", "abc");
  const io::Fd fd = io::open_file(t.path / "short", O_RDONLY);
  char buf[8];
  CHECK_THAT(error_of([&] { io::pread_all(fd.get(), buf, 8, 0, t.path / "short"); }),
             Catch::Contains("short: ends at byte 3, expected 8 (truncated)"));
}

TEST_CASE("StagingDir moves files in only when asked and removes itself otherwise") {
  TempDir t;
  fs::path staged;
  {
    io::StagingDir s(t.path, "wireup-test");
    staged = s.path();
    CHECK(staged.filename().string() == ".wireup-test." + std::to_string(::getpid()) + ".tmp");
    io::write_atomically(s.file("a"), "A");
    io::write_atomically(s.file("b"), "B");
    s.move_into_output({"a"});
    CHECK(slurp(t.path / "a") == "A");
    CHECK_FALSE(fs::exists(t.path / "b"));
  }
  CHECK_FALSE(fs::exists(staged));  // b went with it
  CHECK_FALSE(fs::exists(t.path / "b"));
}

TEST_CASE("StagingDir removes the directories of dead runs, never of live ones") {
  TempDir t;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  REQUIRE(child > 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  const auto dead = t.path / (".wireup-test." + std::to_string(child) + ".tmp");
  const auto live = t.path / (".wireup-test." + std::to_string(::getppid()) + ".tmp");
  const auto other = t.path / (".other-prefix." + std::to_string(child) + ".tmp");
  for (const auto& d : {dead, live, other}) fs::create_directory(d);
  io::write_atomically(dead / "half-written", "x");
  io::StagingDir s(t.path, "wireup-test");
  CHECK_FALSE(fs::exists(dead));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other));
}
