// Agent mode's private run directory: its base and its name.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "wireup/run_dir_rules.hpp"

using namespace wireup;

TEST_CASE("run directory base: TMPDIR when set, else /tmp") {
  CHECK(temp_base(std::nullopt) == "/tmp");
  CHECK(temp_base(std::string()) == "/tmp");
  CHECK(temp_base(std::string("/scratch/me")) == "/scratch/me");
}

TEST_CASE("run directory template: uid in the name, six X for mkdtemp, no doubled slash") {
  CHECK(run_dir_template("/tmp", 1000) == "/tmp/wireup-launch-1000.XXXXXX");
  CHECK(run_dir_template("/scratch/me//", 0) == "/scratch/me/wireup-launch-0.XXXXXX");
  CHECK(run_dir_template("/", 5) == "/wireup-launch-5.XXXXXX");
}

TEST_CASE("run directory base: a directory; writable by others only when sticky") {
  CHECK_FALSE(temp_base_problem("/tmp", S_IFDIR | 01777));
  CHECK_FALSE(temp_base_problem("/home/me", S_IFDIR | 0755));
  CHECK_FALSE(temp_base_problem("/home/me", S_IFDIR | 0700));
  const auto open = temp_base_problem("/shared", S_IFDIR | 0777);
  REQUIRE(open);
  CHECK(open->find("/shared is writable by other users and not sticky") != std::string::npos);
  CHECK(temp_base_problem("/grp", S_IFDIR | 0775));
  CHECK(*temp_base_problem("/tmp/f", S_IFREG | 0600) == "/tmp/f is not a directory");
  CHECK(temp_base_problem("/tmp/l", S_IFLNK | 0777));
}
