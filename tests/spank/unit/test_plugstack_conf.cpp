#include <catch2/catch.hpp>

#include "wireup/error.hpp"
#include "wireup/plugstack_conf.hpp"

using namespace wireup;
using Words = std::vector<std::string>;

TEST_CASE("the words after spank_wireup.so on the first line that loads it") {
  const std::string conf =
      "# wireup\n"
      "optional /usr/lib/slurm/other.so x=1\n"
      "include /etc/slurm/plugstack.conf.d/*\n"
      "\toptional  /usr/lib/slurm/spank_wireup.so default=on\tefa=off # comment=here\n"
      "required spank_wireup.so default=off\n";
  CHECK(wireup_args_in_plugstack(conf, "p.conf") == Words{"default=on", "efa=off"});
  CHECK(wireup_args_in_plugstack("required spank_wireup.so", "p.conf").empty());
  CHECK(wireup_args_in_plugstack("optional x/spank_wireup.so a=b#c=d", "p.conf") == Words{"a=b"});
}

TEST_CASE("lines Slurm would not load from are skipped") {
  CHECK_THROWS_WITH(wireup_args_in_plugstack("# optional spank_wireup.so default=on\n"
                                             "bogus spank_wireup.so default=on\n"
                                             "optional spank_wireup.so.bak\n",
                                             "/etc/p.conf"),
                    Catch::Contains("/etc/p.conf: no line loads spank_wireup.so"));
}

TEST_CASE("bounded input: NUL bytes, long lines and huge files are errors naming the file") {
  CHECK_THROWS_WITH(wireup_args_in_plugstack(std::string(16, '\0'), "/dev/zero"),
                    Catch::Contains("/dev/zero: NUL byte at offset 0"));
  const std::string at_limit =
      "optional spank_wireup.so " + std::string(kPlugstackLineMax - 25, 'a') + "\n";
  CHECK(wireup_args_in_plugstack(at_limit, "p").size() == 1);
  const std::string too_long = "# x\n" + std::string(kPlugstackLineMax + 1, 'a') + "\n";
  CHECK_THROWS_WITH(wireup_args_in_plugstack(too_long, "p"),
                    Catch::Contains("p: line 2 is longer than 4095 bytes"));
  const std::string late_long = "optional spank_wireup.so\n" + std::string(5000, '#');
  CHECK_THROWS_AS(wireup_args_in_plugstack(late_long, "p"), InputError);
  std::string huge(kPlugstackBytesMax + 1, '\n');
  CHECK_THROWS_WITH(wireup_args_in_plugstack(huge, "big.conf"),
                    Catch::Contains("big.conf: larger than 1048576 bytes"));
}
