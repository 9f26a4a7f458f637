#include <catch2/catch.hpp>
#include <functional>

#include "wireup/error.hpp"
#include "wireup/settings.hpp"

using namespace wireup;
using Args = std::vector<std::string>;

TEST_CASE("admin arguments") {
  const auto c = parse_admin_args({"default=on", "efa=off", "port_base=20000", "port_range=500",
                                   "nccl_socket_ifname=^docker,lo,veth", "nccl_debug=info",
                                   "omp_num_threads=off", "setenv=FOO=a=b",
                                   "forceenv=NCCL_P2P_DISABLE=1", "sysroot=/tmp/fake"});
  CHECK(c.default_on);
  CHECK(c.efa == EfaMode::Off);
  CHECK(c.ports.base == 20000);
  CHECK(c.ports.range == 500);
  CHECK(c.nccl_socket_ifname == "^docker,lo,veth");
  CHECK(c.nccl_debug == "INFO");
  CHECK_FALSE(c.omp_threads);
  REQUIRE(c.extra.size() == 2);
  CHECK(c.extra[0].name == "FOO");
  CHECK(c.extra[0].value == "a=b");
  CHECK(c.extra[0].mode == Mode::IfUnset);
  CHECK(c.extra[1].mode == Mode::Force);
  CHECK(c.sysroot == "/tmp/fake");

  const auto d = parse_admin_args({});
  CHECK_FALSE(d.default_on);
  CHECK(d.efa == EfaMode::Auto);
  CHECK(d.ports.base == 61000);
  CHECK(d.memory_snapshot_dirs == std::vector<std::string>{"/dev/shm"});
  CHECK(parse_admin_args({"memory_snapshot_dirs=/dev/shm,/scratch/shm"}).memory_snapshot_dirs ==
        std::vector<std::string>{"/dev/shm", "/scratch/shm"});
  CHECK(parse_admin_args({"memory_snapshot_dirs=OFF"}).memory_snapshot_dirs.empty());
}

TEST_CASE("bad admin arguments name the key and the expected values") {
  CHECK_THROWS_WITH(parse_admin_args({"defualt=on"}),
                    Catch::Contains("unknown key 'defualt'") && Catch::Contains("default=on|off"));
  CHECK_THROWS_WITH(parse_admin_args({"efa=maybe"}),
                    Catch::Contains("efa") && Catch::Contains("auto, on or off"));
  CHECK_THROWS_WITH(parse_admin_args({"port_base=80"}), Catch::Contains("1024..65535"));
  CHECK_THROWS_WITH(
      parse_admin_args({"memory_snapshot_dirs=shm"}),
      Catch::Contains("memory_snapshot_dirs") && Catch::Contains("absolute directories"));
  for (const Args& bad :
       {Args{"default"}, Args{"=on"}, Args{"port_base=-1"}, Args{"port_base=70000"},
        Args{"port_range=0"}, Args{"port_range=x"}, Args{"nccl_socket_ifname=eth0;rm"},
        Args{"nccl_socket_ifname="}, Args{"nccl_debug=LOUD"}, Args{"setenv=NOEQUALS"},
        Args{"setenv=1BAD=x"}, Args{"setenv=A=b\nc"}, Args{"sysroot=relative"},
        Args{"omp_num_threads=2"}, Args{"memory_snapshot_dirs="},
        Args{"memory_snapshot_dirs=dev/shm"}, Args{"memory_snapshot_dirs=/dev/shm,,/tmp"},
        Args{"memory_snapshot_dirs=/a,/b,/c,/d,/e,/f,/g,/h,/i"}}) {
    INFO(bad[0]);
    CHECK_THROWS_AS(parse_admin_args(bad), InputError);
  }
}

TEST_CASE("user option values") {
  CHECK(parse_on_off("--wireup", nullptr, true));
  CHECK_THROWS_WITH(parse_on_off("--wireup", "", true),
                    Catch::Contains("--wireup=: empty value") && Catch::Contains("on or off"));
  CHECK_FALSE(parse_on_off("--wireup", "off", true));
  CHECK(parse_on_off("--wireup", "YES", false));
  CHECK_THROWS_WITH(parse_on_off("--wireup", "maybe", true),
                    Catch::Contains("--wireup") && Catch::Contains("on or off"));
  CHECK(parse_efa_mode("--wireup-efa", "ON") == EfaMode::On);
  CHECK_THROWS_WITH(parse_efa_mode("--wireup-efa", "bogus"),
                    Catch::Contains("--wireup-efa") && Catch::Contains("'bogus'") &&
                        Catch::Contains("auto, on or off"));
  CHECK_THROWS_AS(parse_efa_mode("--wireup-efa", nullptr), InputError);
  CHECK(parse_nccl_debug("--wireup-nccl-debug", "info") == "INFO");
  CHECK(parse_nccl_debug("--wireup-nccl-debug", "off").empty());
  CHECK_THROWS_AS(parse_nccl_debug("--wireup-nccl-debug", "verbose"), InputError);
}

TEST_CASE("when wireup is on") {
  AdminConfig admin;
  UserOptions user;
  CHECK_FALSE(wireup_enabled(admin, user));
  admin.default_on = true;
  CHECK(wireup_enabled(admin, user));
  user.wireup = false;
  CHECK_FALSE(wireup_enabled(admin, user));
  admin.default_on = false;
  user = {};
  user.efa = EfaMode::Off;
  CHECK(wireup_enabled(admin, user));  // a sub-option implies --wireup
  user.wireup = false;
  CHECK_FALSE(wireup_enabled(admin, user));
}

TEST_CASE("option values as Slurm delivers them") {
  const char* bare = nullptr;
  CHECK(option_value(bare, false) == nullptr);
  CHECK(option_value("(null)", false) == nullptr);  // sbatch's bare flag, read by srun
  CHECK(option_value("(null)", true) == nullptr);
  CHECK(option_value("", true) == nullptr);             // sbatch's bare flag in slurmstepd
  CHECK(std::string(option_value("", false)).empty());  // --wireup= on a command line
  CHECK(std::string(option_value("off", true)) == "off");
  CHECK(parse_on_off("--wireup", option_value("", true), true));
  CHECK_THROWS_AS(parse_on_off("--wireup", option_value("", false), true), InputError);
}

TEST_CASE("a long value is cut short in messages") {
  const std::string big(100000, 'x');
  for (const auto& f : std::vector<std::function<void()>>{
           [&] { parse_efa_mode("--wireup-efa", big.c_str()); },
           [&] { parse_on_off("--wireup", big.c_str(), true); },
           [&] { parse_nccl_debug("--wireup-nccl-debug", big.c_str()); },
           [&] { parse_admin_args({"efa=" + big}); }, [&] { parse_admin_args({big}); },
           [&] { parse_admin_args({big + "=1"}); }}) {
    try {
      f();
      FAIL("accepted a 100000-byte value");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CHECK(what.size() < 1000);
      CHECK_THAT(what, Catch::Contains("(100000 bytes)") || Catch::Contains("(100002 bytes)") ||
                           Catch::Contains("(100004 bytes)"));
    }
  }
}

TEST_CASE("a key given twice: the last one wins, with a warning naming the key") {
  const auto c = parse_admin_args(
      {"efa=off", "default=on", "efa=auto", "setenv=FOO=1", "forceenv=FOO=2", "setenv=BAR=1"});
  CHECK(c.efa == EfaMode::Auto);
  REQUIRE(c.warnings.size() == 2);
  CHECK_THAT(c.warnings[0], Catch::Contains("'efa' given twice ('off', then 'auto')") &&
                                Catch::Contains("the last one is used"));
  CHECK_THAT(c.warnings[1], Catch::Contains("'setenv/forceenv FOO' given twice"));
  CHECK(c.extra.back().name == "BAR");
  CHECK(parse_admin_args({"efa=off", "default=on"}).warnings.empty());
}
